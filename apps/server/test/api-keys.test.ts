import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, before, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { ApiKeyStore } from "@petstore/storage"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Effect, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { createApp, generateApiKey, issueApiKey, StoredKeys } from "@petstore/http"
import { closeGracefully, createServer, listen } from "@petstore/http/node"
import { assertError } from "@petstore/test-support/error-body"
import { storageLayer, type StorageChoice } from "../src/storage/storage-selection.js"
import { captureLogs } from "./log-capture.js"

const envKey = "env-key-for-development"

/** How often the app asked the store for a key, and wrote last uses: a count over the real store. */
interface StoreCalls {
  lookups: number
  writes: number
}

const countingStore = (calls: StoreCalls) =>
  Layer.effect(
    ApiKeyStore,
    Effect.map(ApiKeyStore, (store) =>
      ApiKeyStore.of({
        ...store,
        findIdByHash: (hash) =>
          Effect.zipLeft(
            store.findIdByHash(hash),
            Effect.sync(() => (calls.lookups += 1)),
          ),
        recordUses: (uses) =>
          Effect.zipLeft(
            store.recordUses(uses),
            Effect.sync(() => (calls.writes += 1)),
          ),
      }),
    ),
  )

/** The real app, with `PETSTORE_API_KEYS` = [envKey] and the key store of `choice`. */
const startKeyedServer = async (choice: StorageChoice) => {
  const calls: StoreCalls = { lookups: 0, writes: 0 }
  const logs = captureLogs()
  const storage = storageLayer(choice)
  const runtime = ManagedRuntime.make(
    Layer.provideMerge(StoredKeys.layer(), Layer.provideMerge(countingStore(calls), storage)),
  )
  const storedKeys = await runtime.runPromise(StoredKeys.StoredKeys)
  const app = createApp({ runtime, apiKeys: [envKey], storedKeys, logger: logs.logger })
  const server = createServer(app)
  const port = await listen(server, 0, "127.0.0.1")
  const withKey = (key: string) =>
    fetch(`http://127.0.0.1:${port}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } })
  const store = <A, E>(effect: Effect.Effect<A, E, ApiKeyStore>) => runtime.runPromise(effect)
  const issue = async (label: string) => {
    const { key, record } = await store(issueApiKey(label))
    return { key: Redacted.value(key), id: record.id }
  }
  return {
    calls,
    logs,
    storedKeys,
    withKey,
    store,
    issue,
    close: async () => {
      await closeGracefully(server, 1000)
      await runtime.dispose()
    },
  }
}

type KeyedServer = Awaited<ReturnType<typeof startKeyedServer>>

/** Milliseconds until `key` is refused, asking every 50 ms; fails after 5 s. */
const refusedAfter = async (server: KeyedServer, key: string, since: number) => {
  while (Date.now() - since < 5_000) {
    const response = await server.withKey(key)
    await response.arrayBuffer()
    if (response.status === 401) return Date.now() - since
    assert.equal(response.status, 200)
    await sleep(50)
  }
  assert.fail("the revoked key was still accepted after 5 s")
}

const directory = mkdtempSync(path.join(tmpdir(), "petstore-api-keys-"))
after(() => rmSync(directory, { recursive: true, force: true }))

describe("stored API keys (SQLite)", () => {
  let server: KeyedServer
  before(async () => {
    server = await startKeyedServer({ kind: "sqlite", filename: path.join(directory, "keys.db") })
  })
  after(() => server.close())

  it("accepts a stored key, with Cache-Control: no-store, and logs its id as the principal", async () => {
    const { key, id } = await server.issue("accepted")
    const response = await server.withKey(key)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get("cache-control"), "no-store")
    await response.arrayBuffer()
    const access = server.logs.lines().filter((line) => line["message"] === "request")
    assert.equal(access.at(-1)?.["keyId"], id)
    assert.doesNotMatch(server.logs.raw.join(""), new RegExp(key))
  })

  it("keeps accepting the keys of PETSTORE_API_KEYS, in any form, beside stored keys", async () => {
    const response = await server.withKey(envKey)
    assert.equal(response.status, 200)
    await response.arrayBuffer()
  })

  it("refuses a pst_ key with a wrong checksum with 401, without asking the store", async () => {
    const { key } = await server.issue("mistyped")
    const typo = `${key.slice(0, 20)}${key.charAt(20) === "a" ? "b" : "a"}${key.slice(21)}`
    const before = server.calls.lookups
    const response = await server.withKey(typo)
    await assertError(response, 401, "unauthorized")
    assert.equal(
      response.headers.get("www-authenticate"),
      'Bearer realm="petstore", error="invalid_token"',
    )
    assert.equal(server.calls.lookups, before)
  })

  it("refuses a well-formed key that is not stored, asking the store once a second at most", async () => {
    const unknown = generateApiKey()
    const before = server.calls.lookups
    for (let i = 0; i < 20; i += 1)
      await assertError(await server.withKey(unknown), 401, "unauthorized")
    assert.equal(server.calls.lookups - before, 1)
  })

  it("asks the store once for a key presented by many requests at the same moment", async () => {
    const { key } = await server.issue("simultaneous")
    const before = server.calls.lookups
    const verdicts = await Promise.all(
      Array.from({ length: 20 }, () => server.storedKeys.identify(key)),
    )
    for (const verdict of verdicts) assert.equal(verdict.kind, "admitted")
    assert.equal(server.calls.lookups - before, 1)
  })

  it("does not ask the store on every request: one look-up per key per second, however many requests", async () => {
    const { key } = await server.issue("busy")
    const before = server.calls.lookups
    const started = Date.now()
    let requests = 0
    while (Date.now() - started < 1_500) {
      const responses = await Promise.all(Array.from({ length: 20 }, () => server.withKey(key)))
      for (const response of responses) {
        assert.equal(response.status, 200)
        await response.arrayBuffer()
      }
      requests += responses.length
    }
    const lookups = server.calls.lookups - before
    assert.ok(requests >= 100, `only ${requests} requests`)
    assert.ok(lookups >= 1 && lookups <= 3, `${lookups} look-ups for ${requests} requests`)
  })

  it("refuses a revoked key within 2 seconds, without a restart", async () => {
    const { key, id } = await server.issue("revoked")
    assert.equal((await server.withKey(key)).status, 200)
    const revokedAt = Date.now()
    await server.store(Effect.flatMap(ApiKeyStore, (store) => store.revoke(id)))
    const elapsed = await refusedAfter(server, key, revokedAt)
    assert.ok(elapsed < 2_000, `still accepted ${elapsed} ms after the revocation`)
  })

  it("records a key's last use in the background, at most once a minute", async () => {
    const { key, id } = await server.issue("used")
    const lastUsed = () =>
      server.store(
        Effect.map(ApiKeyStore, (store) => store.list).pipe(
          Effect.flatten,
          Effect.map((records) => records.find((record) => record.id === id)?.lastUsedAt),
        ),
      )
    assert.deepEqual(await lastUsed(), Option.none())
    const usedAt = Date.now()
    assert.equal((await server.withKey(key)).status, 200)
    let recorded = await lastUsed()
    for (
      let waited = 0;
      recorded !== undefined && Option.isNone(recorded) && waited < 5_000;
      waited += 100
    ) {
      await sleep(100)
      recorded = await lastUsed()
    }
    const at = Option.getOrThrow(recorded ?? Option.none())
    assert.ok(Math.abs(at - usedAt) < 1_000, `last used ${at}, used at ${usedAt}`)
    const writes = server.calls.writes
    for (let i = 0; i < 10; i += 1) {
      assert.equal((await server.withKey(key)).status, 200)
      await sleep(150)
    }
    assert.equal(server.calls.writes, writes, "the last use was written again within the minute")
    assert.deepEqual(await lastUsed(), Option.some(at))
  })
})

await withTemporaryPostgresDatabase(
  "stored API keys while PostgreSQL is unreachable",
  (database) => {
    it("a stored key is answered 503 (Retry-After) while the store cannot say, and works again after", async () => {
      const server = await startKeyedServer({ kind: "postgres", url: Redacted.make(database.url) })
      try {
        const { key } = await server.issue("outage")
        await database.refuseConnections()
        try {
          // The cache's verdict lasts a second; after it the store must be asked.
          await sleep(1_100)
          const response = await server.withKey(key)
          assert.equal(response.headers.get("retry-after"), "1")
          await assertError(response, 503, "storage_unavailable")
          const env = await server.withKey(envKey)
          assert.notEqual(env.status, 401, "an environment key needs no store")
          await env.arrayBuffer()
        } finally {
          await database.allowConnections()
        }
        const recovered = await server.withKey(key)
        assert.equal(recovered.status, 200)
        await recovered.arrayBuffer()
      } finally {
        await server.close()
      }
    })
  },
)
