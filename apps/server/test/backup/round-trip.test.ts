import assert from "node:assert/strict"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, before, describe, it } from "node:test"
import { issueApiKey } from "@petstore/http"
import { ApiKeyStore } from "@petstore/storage"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { ApiKeyLabel } from "@petstore/http"
import { Effect, Redacted, Schema } from "effect"
import { apiKeyStoreLayer } from "../../src/storage/api-key-store-selection.js"
import {
  assertSummaryOnly,
  dumpData,
  postPet,
  processTestTimeout,
  readPet,
  readPets,
  runStorageCli,
  startServer,
  summaryCounts,
  withSql,
  type PetBody,
  type Server,
  type StoreDump,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-backup-round-trip-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const max = Number.MAX_SAFE_INTEGER

/**
 * Names in many scripts, astral characters (the longest allowed: 255 of them, 1,020 bytes of
 * UTF-8), and characters that quoting in SQL or in a PostgreSQL array literal must keep.
 */
const names = [
  "Rex",
  "Ζεύς",
  "Шарик",
  "ポチ",
  "小白",
  "멍멍이",
  "كلب",
  "כלב",
  "कुत्ता",
  "🐕‍🦺 service dog",
  "𝕏 𐍈 🦖 𝄞",
  "🐕".repeat(255),
  "a".repeat(255),
  `O'Brien "quoted" \\ back`,
  "{braces},commas",
  "NULL",
  "tab\there",
  " leading and trailing ",
]
const categoryIds = [0, 1, -1, max, -max, 42, 7]
const statuses = ["available", "pending", "sold", undefined] as const

const newPets = names.map((name, index) => {
  const status = statuses[index % statuses.length]
  const categoryId = categoryIds[index % categoryIds.length] ?? 0
  return status === undefined ? { name, categoryId } : { name, categoryId, status }
})

interface Fixture {
  readonly source: string
  readonly backup: string
  readonly dump: StoreDump
  readonly pets: ReadonlyArray<PetBody>
  /** A stored key, used before the backup. */
  readonly keptKey: string
  /** A stored key revoked before the backup. */
  readonly revokedKey: string
  /** Creates sent with an `Idempotency-Key` before the backup, and what they answered. */
  readonly replays: ReadonlyArray<{
    readonly key: string
    readonly bearer: string
    readonly pet: PetBody
  }>
  /** A next-page link taken before the backup, and the page it gave. */
  readonly cursor: { readonly link: string; readonly page: ReadonlyArray<PetBody> }
  /** The highest id ever answered (the pet was then deleted: only the sequence remembers it). */
  readonly highestId: number
}

const storageChoice = (storage: string) =>
  storage.startsWith("file:")
    ? { kind: "sqlite" as const, filename: storage.slice("file:".length) }
    : { kind: "postgres" as const, url: Redacted.make(storage) }

/** Stores keys as `npm run keys -- create` does, and revokes one. */
const storeKeys = (storage: string) =>
  Effect.runPromise(
    Effect.provide(
      Effect.gen(function* () {
        const kept = yield* issueApiKey(Schema.decodeSync(ApiKeyLabel)("kept: Équipe 東京 🐕"))
        const revoked = yield* issueApiKey(Schema.decodeSync(ApiKeyLabel)("revoked"))
        yield* Effect.flatMap(ApiKeyStore, (store) => store.revoke(revoked.record.id))
        return { kept: Redacted.value(kept.key), revoked: Redacted.value(revoked.key) }
      }),
      apiKeyStoreLayer(storageChoice(storage)),
    ),
  )

const nextLinkOf = (response: Response) => {
  const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1]
  assert.ok(link !== undefined, "no next link")
  return link
}

/** Fills a store through a server, as clients would, then backs it up with the server stopped. */
const makeFixture = async (source: string, backup: string): Promise<Fixture> => {
  const server = await startServer(source)
  let keys: { kept: string; revoked: string }
  const pets: Array<PetBody> = []
  const replays: Array<Fixture["replays"][number]> = []
  let cursor: Fixture["cursor"]
  try {
    keys = await storeKeys(source)
    for (const [index, pet] of newPets.entries()) {
      const bearer = index % 3 === 0 ? keys.kept : undefined
      const key = index % 2 === 0 ? `replay-${index}` : undefined
      const response = await postPet(server, pet, {
        ...(bearer === undefined ? {} : { Authorization: `Bearer ${bearer}` }),
        ...(key === undefined ? {} : { "Idempotency-Key": key }),
      })
      assert.equal(response.status, 201, await response.clone().text())
      const created = await readPet(response)
      assert.deepEqual({ ...created, id: 0 }, { ...pet, id: 0 })
      pets.push(created)
      if (key !== undefined) replays.push({ key, bearer: bearer ?? "", pet: created })
    }
    const first = await server.api("/pets?limit=3&status=sold")
    const link = nextLinkOf(first)
    const page = await readPets(
      await fetch(`${server.origin}${link}`, {
        headers: { Authorization: `Bearer ${keys.kept}` },
      }),
    )
    assert.ok(page.length > 0)
    cursor = { link, page }
  } finally {
    // Stopping writes the stored key's last use.
    await server.stop()
  }
  // The last pet, deleted, as a delete would: its id must never be given again.
  const last = pets.pop()
  assert.ok(last !== undefined)
  await withSql(source, (sql) => sql`DELETE FROM pets WHERE id = ${last.id}`)
  const dump = await dumpData(source)
  assert.equal(dump["api_keys"]?.length, 1)
  assert.notEqual(dump["api_keys"]?.[0]?.[4], null, "the kept key's last use was not recorded")
  assert.equal(dump["idempotency_keys"]?.length, replays.length)

  const line = assertSummaryOnly(await runStorageCli(["backup", backup], source))
  assert.deepEqual(summaryCounts(line), {
    ...summaryCounts(line),
    pets: pets.length,
    apiKeys: 1,
    idempotencyRecords: replays.length,
    lastPetId: last.id,
    bytes: statSync(backup).size,
  })
  assert.equal(statSync(backup).mode & 0o777, 0o600)
  return {
    source,
    backup,
    dump,
    pets,
    keptKey: keys.kept,
    revokedKey: keys.revoked,
    replays,
    cursor,
    highestId: last.id,
  }
}

/** Everything the fixture promised, on a server running on the restored store. */
const assertServedAsBefore = async (server: Server, fixture: Fixture) => {
  for (const pet of fixture.pets) {
    const response = await server.api(`/pets/${pet.id}`)
    assert.equal(response.status, 200)
    assert.deepEqual(await readPet(response), pet)
  }
  const kept = await server.api("/pets?limit=1", {
    headers: { Authorization: `Bearer ${fixture.keptKey}` },
  })
  assert.equal(kept.status, 200, "a stored key does not work after the restore")
  const revoked = await server.api("/pets?limit=1", {
    headers: { Authorization: `Bearer ${fixture.revokedKey}` },
  })
  assert.equal(revoked.status, 401, "a key revoked before the backup works after the restore")

  for (const { key, bearer, pet } of fixture.replays) {
    const { id: _, ...sent } = pet
    const response = await postPet(server, sent, {
      "Idempotency-Key": key,
      ...(bearer === "" ? {} : { Authorization: `Bearer ${bearer}` }),
    })
    assert.equal(response.status, 201)
    assert.equal(response.headers.get("Idempotent-Replayed"), "true", `${key} was not replayed`)
    assert.deepEqual(await readPet(response), pet)
  }

  const page = await fetch(`${server.origin}${fixture.cursor.link}`, {
    headers: { Authorization: `Bearer ${fixture.keptKey}` },
  })
  assert.deepEqual(await readPets(page), fixture.cursor.page)

  const created = await postPet(server, { name: "after the restore", categoryId: 1 })
  assert.equal(created.status, 201)
  const { id } = await readPet(created)
  assert.ok(id > fixture.highestId, `the new id ${id} is not above ${fixture.highestId}`)
}

await withTemporaryPostgresDatabase(
  "backups and restores between every pair of stores",
  (database) => {
    const sources = {
      sqlite: async () => `file:${path.join(directory, "source.db")}`,
      postgres: async () => (await database.createAnother()).url,
    }
    const targets = {
      sqlite: async (name: string) => `file:${path.join(directory, `${name}.db`)}`,
      postgres: async () => (await database.createAnother()).url,
    }
    for (const [sourceKind, makeSource] of Object.entries(sources)) {
      describe(`a backup of a ${sourceKind === "sqlite" ? "SQLite" : "PostgreSQL"} store`, () => {
        let fixture: Fixture
        before(
          async () => {
            fixture = await makeFixture(
              await makeSource(),
              path.join(directory, `from-${sourceKind}.backup`),
            )
          },
          { timeout: processTestTimeout },
        )
        for (const [targetKind, makeTarget] of Object.entries(targets)) {
          it(
            `restored into ${targetKind === "sqlite" ? "a new SQLite file" : "an empty PostgreSQL database"}: every field exact, keys and revocations, idempotency records, cursors, and ids continuing above the highest ever given`,
            { timeout: processTestTimeout },
            async () => {
              const target = await makeTarget(`${sourceKind}-to-${targetKind}`)
              const line = assertSummaryOnly(
                await runStorageCli(["restore", fixture.backup], target),
              )
              assert.equal(summaryCounts(line).pets, fixture.pets.length)
              assert.deepEqual(await dumpData(target), fixture.dump)
              const server = await startServer(target)
              try {
                await assertServedAsBefore(server, fixture)
              } finally {
                await server.stop()
              }
            },
          )
        }
      })
    }
  },
)
