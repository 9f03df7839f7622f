import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, before, it } from "node:test"
import { CategoryId, NewPet, PetRepository } from "@petstore/core"
import { StoreFreeze } from "@petstore/storage/sql"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Effect, Layer, Redacted } from "effect"
import { storageLayer } from "../../src/storage/storage-selection.js"
import {
  assertSummaryOnly,
  dumpData,
  processTestTimeout,
  runStorageCli,
  withSql,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-backup-replace-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const layerFor = (storage: string) =>
  storageLayer(
    storage.startsWith("file:")
      ? { kind: "sqlite", filename: storage.slice("file:".length) }
      : { kind: "postgres", url: Redacted.make(storage) },
  )

/** Creates pets named `names` through the repository, as a server would; answers their ids. */
const createPets = (storage: string, names: ReadonlyArray<string>) =>
  Effect.runPromise(
    Effect.provide(
      Effect.forEach(names, (name) =>
        Effect.map(
          Effect.flatMap(PetRepository, (pets) =>
            pets.create(NewPet.make({ name, categoryId: CategoryId.make(1) })),
          ),
          (pet) => pet.id,
        ),
      ),
      Layer.orDie(layerFor(storage)),
    ),
  )

const backup = path.join(directory, "three.backup")
const source = `file:${path.join(directory, "source.db")}`

before(
  async () => {
    await createPets(source, ["backed up 1", "backed up 2", "backed up 3"])
    assertSummaryOnly(await runStorageCli(["backup", backup], source))
  },
  { timeout: processTestTimeout },
)

await withTemporaryPostgresDatabase("a restore with --replace", (database) => {
  const targets = {
    "an SQLite store": async () => `file:${path.join(directory, "target.db")}`,
    "a PostgreSQL database": async () => (await database.createAnother()).url,
  }
  for (const [name, makeTarget] of Object.entries(targets)) {
    it(
      `into ${name} holding more pets: replaces them with the backup's, gives none of their ids again, and keeps the store frozen`,
      { timeout: processTestTimeout },
      async () => {
        const target = await makeTarget()
        const replacedIds = await createPets(
          target,
          Array.from({ length: 10 }, (_, index) => `replaced ${index}`),
        )
        await withSql(target, () => StoreFreeze.freeze)
        assertSummaryOnly(await runStorageCli(["restore", backup, "--replace"], target))

        assert.deepEqual(await dumpData(target), await dumpData(source))
        const frozen = await withSql(target, (sql) => sql`SELECT frozen_at FROM petstore_freeze`)
        assert.equal(frozen.length, 1, "the restore lifted the target's freeze")
        await withSql(target, () => StoreFreeze.thaw)
        const [next] = await createPets(target, ["after the restore"])
        assert.ok(
          next !== undefined && next > Math.max(...replacedIds),
          `the id ${next} was given before`,
        )
      },
    )
  }
})
