import assert from "node:assert/strict"
import { createHash, randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type { StorageUnavailable } from "@petstore/core"
import { Array, Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { ApiKeyStore, MemoryApiKeyStore, type NewApiKey } from "@petstore/storage"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { storageLayer } from "../src/storage/storage-selection.js"

type StoreLayer = Layer.Layer<ApiKeyStore, StorageUnavailable>

const newKey = (label: string): NewApiKey => ({
  id: `key_${randomBytes(8).toString("hex")}`,
  label,
  hash: createHash("sha256").update(randomBytes(32)).digest("hex"),
})

const run = <A, E>(layer: StoreLayer, effect: Effect.Effect<A, E, ApiKeyStore>) =>
  Effect.runPromise(Effect.provide(effect, layer))

const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

/** What every `ApiKeyStore` must do; `fresh` gives a store holding no key. */
const apiKeyStoreContract = (name: string, fresh: () => Promise<StoreLayer>) =>
  describe(`ApiKeyStore: ${name}`, () => {
    it("lists a created key by id, label and times, never its hash", async () => {
      const layer = await fresh()
      const key = newKey("deploy bot")
      const before = Date.now()
      const [created, listed] = await run(
        layer,
        Effect.flatMap(ApiKeyStore, (store) => Effect.all([store.create(key), store.list])),
      )
      assert.equal(created.id, key.id)
      assert.equal(created.label, "deploy bot")
      assert.ok(created.createdAt >= before - 1000 && created.createdAt <= Date.now())
      assert.deepEqual(created.lastUsedAt, Option.none())
      assert.deepEqual(listed, [created])
      assert.deepEqual(Object.keys(listed[0] ?? {}).sort(), [
        "createdAt",
        "id",
        "label",
        "lastUsedAt",
      ])
      assert.doesNotMatch(JSON.stringify(listed), new RegExp(key.hash))
    })

    it("finds a key's id by its hash, and nothing for an unknown hash", async () => {
      const layer = await fresh()
      const [first, second] = [newKey("a"), newKey("b")]
      const found = await run(
        layer,
        Effect.gen(function* () {
          const store = yield* ApiKeyStore
          yield* store.create(first)
          yield* store.create(second)
          return yield* Effect.all([
            store.findIdByHash(first.hash),
            store.findIdByHash(second.hash),
            store.findIdByHash(newKey("c").hash),
          ])
        }),
      )
      assert.deepEqual(found, [Option.some(first.id), Option.some(second.id), Option.none()])
    })

    it("revokes a key: it is no longer found or listed; an unknown id is ApiKeyNotFound", async () => {
      const layer = await fresh()
      const [kept, revoked] = [newKey("kept"), newKey("revoked")]
      const outcome = await run(
        layer,
        Effect.gen(function* () {
          const store = yield* ApiKeyStore
          yield* store.create(kept)
          yield* store.create(revoked)
          yield* store.revoke(revoked.id)
          return {
            found: yield* store.findIdByHash(revoked.hash),
            listed: Array.map(yield* store.list, (record) => record.id),
            again: yield* Effect.exit(store.revoke(revoked.id)),
            unknown: yield* Effect.exit(store.revoke("key_unknown")),
          }
        }),
      )
      assert.deepEqual(outcome.found, Option.none())
      assert.deepEqual(outcome.listed, [kept.id])
      assert.deepEqual(failureTag(outcome.again), Option.some("ApiKeyNotFound"))
      assert.deepEqual(failureTag(outcome.unknown), Option.some("ApiKeyNotFound"))
    })

    it("creates a first key only while the store holds none", async () => {
      const layer = await fresh()
      const [first, second] = [newKey("first"), newKey("second")]
      const [made, notMade, listed] = await run(
        layer,
        Effect.flatMap(ApiKeyStore, (store) =>
          Effect.all([store.createFirst(first), store.createFirst(second), store.list]),
        ),
      )
      assert.equal(Option.map(made, (record) => record.id).pipe(Option.getOrNull), first.id)
      assert.deepEqual(notMade, Option.none())
      assert.deepEqual(
        listed.map((record) => record.id),
        [first.id],
      )
    })

    it("records the last use, only ever moving it forward", async () => {
      const layer = await fresh()
      const [used, unused] = [newKey("used"), newKey("unused")]
      const lastUsed = await run(
        layer,
        Effect.gen(function* () {
          const store = yield* ApiKeyStore
          yield* store.create(used)
          yield* store.create(unused)
          yield* store.recordUses([{ id: used.id, at: 2_000_000_000_000 }])
          yield* store.recordUses([
            { id: used.id, at: 1_900_000_000_000 },
            { id: "key_gone", at: 2_100_000_000_000 },
          ])
          return Array.map(yield* store.list, (record): [string, Option.Option<number>] => [
            record.id,
            record.lastUsedAt,
          ])
        }),
      )
      assert.deepEqual(
        new Map(lastUsed),
        new Map([
          [used.id, Option.some(2_000_000_000_000)],
          [unused.id, Option.none()],
        ]),
      )
    })
  })

apiKeyStoreContract("memory", async () => MemoryApiKeyStore.layer)

const directory = mkdtempSync(path.join(tmpdir(), "petstore-keys-"))
after(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshFile = () => path.join(directory, `keys-${++files}.db`)

apiKeyStoreContract("SQLite file", async () =>
  storageLayer({ kind: "sqlite", filename: freshFile() }),
)

describe("ApiKeyStore on an SQLite file", () => {
  it("keeps keys across reopening; the table has a column for the hash, none for the key", async () => {
    const filename = freshFile()
    const key = newKey("kept")
    await run(
      storageLayer({ kind: "sqlite", filename }),
      Effect.flatMap(ApiKeyStore, (store) => store.create(key)),
    )
    const found = await run(
      storageLayer({ kind: "sqlite", filename }),
      Effect.flatMap(ApiKeyStore, (store) => store.findIdByHash(key.hash)),
    )
    assert.deepEqual(found, Option.some(key.id))
    const columns = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          SqliteClient.make({ filename }).pipe(
            Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
          ),
          (sql) => sql`SELECT name FROM pragma_table_info('api_keys') ORDER BY cid`,
        ),
      ),
    )
    assert.deepEqual(
      columns.map((column) => column["name"]),
      ["id", "label", "key_hash", "created_at", "last_used_at"],
    )
  })
})

await withTemporaryPostgresDatabase("ApiKeyStore on PostgreSQL", (database) => {
  const layerOn = (url: string) => storageLayer({ kind: "postgres", url: Redacted.make(url) })

  apiKeyStoreContract("PostgreSQL", async () => layerOn((await database.createAnother()).url))

  it("processes creating a first key at once: exactly one is stored", async () => {
    const fresh = await database.createAnother()
    const winners = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          // Each store has a pool of its own, as a server process would.
          const stores = yield* Effect.forEach(Array.range(1, 4), () =>
            Effect.flatMap(Layer.build(layerOn(fresh.url)), (context) =>
              Effect.provide(ApiKeyStore, context),
            ),
          )
          return yield* Effect.forEach(Array.range(1, 10), () =>
            Effect.gen(function* () {
              const [any] = stores
              if (any === undefined) return 0
              for (const record of yield* any.list) yield* any.revoke(record.id)
              const made = yield* Effect.all(
                stores.map((store, index) => store.createFirst(newKey(`first ${index}`))),
                { concurrency: "unbounded" },
              )
              return made.filter(Option.isSome).length
            }),
          )
        }),
      ),
    )
    assert.deepEqual(winners, Array.replicate(1, 10))
  })

  it("fails with StorageUnavailable while the database is unreachable", async () => {
    const fresh = await database.createAnother()
    const exit = await Effect.runPromiseExit(
      Effect.scoped(
        Effect.gen(function* () {
          const layer = yield* Layer.build(layerOn(fresh.url))
          const store = ApiKeyStore.pipe(Effect.provide(layer))
          yield* Effect.promise(() => fresh.refuseConnections())
          return yield* Effect.flatMap(store, (keys) => keys.findIdByHash(newKey("x").hash))
        }),
      ).pipe(Effect.ensuring(Effect.promise(() => fresh.allowConnections()))),
    )
    assert.deepEqual(failureTag(exit), Option.some("StorageUnavailable"))
  })
})
