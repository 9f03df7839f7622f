import assert from "node:assert/strict"
import { randomBytes } from "node:crypto"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, before, it } from "node:test"
import { CategoryId, NewPet } from "@petstore/core"
import { migrate } from "@petstore/storage/sql"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { Effect } from "effect"
import {
  assertRefused,
  assertSummaryOnly,
  dumpPostgres,
  fileState,
  filesIn,
  processTestTimeout,
  runStorageCli,
  withSql,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-backup-refusals-"))
after(() => rmSync(directory, { recursive: true, force: true }))
const file = (name: string) => path.join(directory, name)

/** A SQLite store made as a server makes it, holding `pets` pets, closed. */
const sqliteStore = (filename: string, pets: number) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const repository = yield* SqlitePetRepository.make({ filename })
        for (let index = 0; index < pets; index++) {
          yield* repository.create(
            NewPet.make({
              name: `pet ${index}`,
              categoryId: CategoryId.make(index),
              status: "sold",
            }),
          )
        }
      }),
    ),
  )

/** Runs `check` on several commands at once, a few at a time: each is a process of its own. */
const inParallel = async <A>(items: ReadonlyArray<A>, check: (item: A) => Promise<void>) => {
  const queue = [...items]
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await check(item)
    }),
  )
}

const good = file("good.backup")
const source = file("source.db")

/** Backups that must be refused, each with what the refusal must say. */
const badBackups: ReadonlyArray<{ name: string; reason: RegExp; make: () => Promise<void> }> = [
  { name: "missing.backup", reason: /missing\.backup .*it does not exist/, make: async () => {} },
  {
    name: "random.backup",
    reason: /random\.backup .*not an SQLite database/,
    make: async () => writeFileSync(file("random.backup"), randomBytes(64 * 1024)),
  },
  {
    name: "truncated.backup",
    reason: /truncated\.backup .*truncated/,
    make: async () => {
      const bytes = readFileSync(good)
      writeFileSync(file("truncated.backup"), bytes.subarray(0, Math.floor(bytes.length / 2)))
    },
  },
  {
    name: "corrupted.backup",
    reason: /corrupted\.backup .*fails SQLite's integrity check/,
    make: async () => {
      // Whole, readable, its tables counting what its metadata says, but one entry of the
      // (status, id) index no longer matches its pet: only an integrity check sees it.
      const [index] = await withSql(
        `file:${good}`,
        (sql) =>
          sql<{
            rootpage: bigint
          }>`SELECT rootpage FROM sqlite_master WHERE name = 'pets_status_id'`,
        { wal: false },
      )
      const bytes = Buffer.from(readFileSync(good))
      const pageSize = bytes.readUInt16BE(16)
      const start = (Number(index?.rootpage ?? 0) - 1) * pageSize
      const at = bytes.indexOf("sold", start, "latin1")
      assert.ok(at >= start && at < start + pageSize, "no index entry to damage")
      bytes.write("sole", at, "latin1")
      writeFileSync(file("corrupted.backup"), bytes)
    },
  },
  {
    name: "newer-schema.backup",
    reason: /newer-schema\.backup .*schema version 99, newer than this petstore's/,
    make: async () => {
      copyFileSync(good, file("newer-schema.backup"))
      await withSql(
        `file:${file("newer-schema.backup")}`,
        (sql) => sql`UPDATE petstore_backup SET schema_version = 99`,
        { wal: false },
      )
    },
  },
  {
    name: "newer-format.backup",
    reason: /newer-format\.backup .*backup format 2, newer than this petstore reads/,
    make: async () => {
      copyFileSync(good, file("newer-format.backup"))
      await withSql(
        `file:${file("newer-format.backup")}`,
        (sql) => sql`UPDATE petstore_backup SET format_version = 2`,
        { wal: false },
      )
    },
  },
  {
    name: "not-a-backup.db",
    reason: /not-a-backup\.db .*not a petstore backup \(it has no petstore_backup table\)/,
    make: () =>
      withSql(`file:${file("not-a-backup.db")}`, (sql) => sql`CREATE TABLE pets (id INTEGER)`, {
        wal: false,
      }).then(() => undefined),
  },
  {
    name: "live-store.db",
    reason: /live-store\.db .*it is in WAL mode, as a live store is and a backup never is/,
    make: () => sqliteStore(file("live-store.db"), 1),
  },
  {
    name: "changed.backup",
    reason: /changed\.backup .*holds 2 rows where its metadata counts 3/,
    make: async () => {
      copyFileSync(good, file("changed.backup"))
      await withSql(`file:${file("changed.backup")}`, (sql) => sql`DELETE FROM pets WHERE id = 1`, {
        wal: false,
      })
    },
  },
]

before(
  async () => {
    await sqliteStore(source, 3)
    assertSummaryOnly(await runStorageCli(["backup", good], `file:${source}`))
    for (const bad of badBackups) await bad.make()
  },
  { timeout: processTestTimeout },
)

await withTemporaryPostgresDatabase("refusals leave the target as it was", (database) => {
  it(
    "a backup refuses an existing file, which keeps every byte, and leaves no file beside it",
    { timeout: processTestTimeout },
    async () => {
      const existing = file("existing.backup")
      writeFileSync(existing, "precious")
      const before = { existing: fileState(existing), files: filesIn(directory) }
      assertRefused(
        await runStorageCli(["backup", existing], `file:${source}`),
        /existing\.backup already exists: a backup never replaces a file/,
      )
      assert.deepEqual({ existing: fileState(existing), files: filesIn(directory) }, before)
    },
  )

  it(
    "a restore refuses a store holding data without --replace: SQLite byte for byte, PostgreSQL row for row",
    { timeout: processTestTimeout },
    async () => {
      const sqlite = file("holding.db")
      await sqliteStore(sqlite, 2)
      const postgres = (await database.createAnother()).url
      await withSql(postgres, (sql) =>
        Effect.zipRight(
          migrate,
          sql`INSERT INTO pets (name, category_id) VALUES ('one', 1), ('two', 2), ('three', 3)`,
        ),
      )
      const before = { sqlite: fileState(sqlite), postgres: await dumpPostgres(postgres) }
      for (const target of [`file:${sqlite}`, postgres]) {
        assertRefused(
          await runStorageCli(["restore", good], target),
          /holds (2|3) pets, 0 stored API keys and 0 idempotency records: a restore refuses a store that holds data.*--replace/,
        )
      }
      assert.deepEqual(
        { sqlite: fileState(sqlite), postgres: await dumpPostgres(postgres) },
        before,
      )
    },
  )

  it(
    "a restore refuses each file that is not a whole backup it knows, naming it and what is wrong, and touches no target",
    { timeout: processTestTimeout },
    async () => {
      const emptySqlite = file("empty-store.db")
      await sqliteStore(emptySqlite, 0)
      const emptyPostgres = (await database.createAnother()).url
      const newDirectory = file("new")
      mkdirSync(newDirectory)
      const before = {
        sqlite: fileState(emptySqlite),
        postgres: await dumpPostgres(emptyPostgres),
        newDirectory: filesIn(newDirectory),
        backups: badBackups.map((bad) => fileState(file(bad.name))),
      }
      const newFile = `file:${path.join(newDirectory, "store.db")}`
      // The file is checked before any target is opened: each refusal is tried on one kind of
      // target, in turn, and one on a new file too.
      const runs = badBackups.flatMap((bad, index) =>
        [
          index % 2 === 0 ? `file:${emptySqlite}` : emptyPostgres,
          ...(index === 1 ? [newFile] : []),
        ].map((target) => ({ bad, target })),
      )
      await inParallel(runs, async ({ bad, target }) =>
        assertRefused(await runStorageCli(["restore", file(bad.name)], target), bad.reason),
      )
      assert.deepEqual(
        {
          sqlite: fileState(emptySqlite),
          postgres: await dumpPostgres(emptyPostgres),
          newDirectory: filesIn(newDirectory),
          backups: badBackups.map((bad) => fileState(file(bad.name))),
        },
        before,
      )
    },
  )

  it(
    "every command refuses memory storage, saying why",
    { timeout: processTestTimeout },
    async () => {
      const before = filesIn(directory)
      await inParallel(
        [
          ["backup", file("from-memory.backup")],
          ["restore", good],
        ],
        async (args) =>
          assertRefused(
            await runStorageCli(args, "memory"),
            /PETSTORE_STORAGE is memory: .*no other process can back them up, restore or freeze them/,
          ),
      )
      assert.deepEqual(filesIn(directory), before)
    },
  )
})
