import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { MemoryPetRepository, ApiKeyStore, MemoryApiKeyStore } from "@petstore/storage"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { sendTo, type Answer } from "@petstore/test-support/requests"
import { createApp, generateApiKey, issueApiKey, StoredKeys } from "../../src/index.js"
import { closeGracefully, createServer, listen } from "../../src/node/index.js"

const envKey = "env-key-for-development"
const decisionTtlMs = 50

/** The real app with stored keys in memory, counting what it asks the store. */
const startCountingServer = async (lookupsPerSecond: number) => {
  const calls = { lookups: 0 }
  const countingStore = Layer.effect(
    ApiKeyStore,
    Effect.map(ApiKeyStore, (store) =>
      ApiKeyStore.of({
        ...store,
        findIdByHash: (hash) =>
          Effect.zipRight(
            Effect.sync(() => (calls.lookups += 1)),
            store.findIdByHash(hash),
          ),
      }),
    ),
  )
  const keys = Layer.provideMerge(countingStore, MemoryApiKeyStore.layer)
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      MemoryPetRepository.layer,
      Layer.provideMerge(
        StoredKeys.layer({
          maxUnknownLookupsPerSecond: lookupsPerSecond,
          decisionTtl: decisionTtlMs,
        }),
        keys,
      ),
    ),
  )
  const storedKeys = await runtime.runPromise(StoredKeys.StoredKeys)
  const app = createApp({
    runtime,
    apiKeys: [envKey],
    storedKeys,
    limits: { failedAuthPerAddress: { capacity: 20, windowSeconds: 60 } },
  })
  const server = createServer(app)
  const origin = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`
  const issued = await runtime.runPromise(issueApiKey("valid"))
  return {
    calls,
    storedKey: Redacted.value(issued.key),
    send: (key: string, from: string): Promise<Answer> =>
      sendTo(origin, "/v1/pets", { from, headers: { Authorization: `Bearer ${key}` } }),
    close: async () => {
      await closeGracefully(server, 1000)
      await runtime.dispose()
    },
  }
}

describe("what one address's wrong keys cost the store (PETSTORE_AUTH_FAILURE_LIMIT=20/min)", () => {
  let server: Awaited<ReturnType<typeof startCountingServer>>
  before(async () => {
    server = await startCountingServer(1_000)
  })
  after(() => server.close())

  it("looks up an address's wrong keys only within its budget, then answers 429 without a look-up", async () => {
    const from = "127.0.0.40"
    const before = server.calls.lookups
    const statuses: Array<number> = []
    for (let i = 0; i < 30; i++) statuses.push((await server.send(generateApiKey(), from)).status)
    assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(10).fill(429)])
    assert.equal(server.calls.lookups - before, 20)
  })

  it("still admits that address's valid keys: the stored one admitted before, and the env one", async () => {
    const from = "127.0.0.41"
    assert.equal((await server.send(server.storedKey, from)).status, 200)
    for (let i = 0; i < 25; i++) await server.send(generateApiKey(), from)
    assert.equal((await server.send(generateApiKey(), from)).status, 429)
    for (let i = 0; i < 5; i++) {
      // The remembered verdict has expired: the key is looked up again, never refused.
      await sleep(decisionTtlMs * 2)
      assert.equal((await server.send(server.storedKey, from)).status, 200)
      assert.equal((await server.send(envKey, from)).status, 200)
    }
  })
})

describe("what a flood of made-up keys from many addresses costs the store", () => {
  const lookupsPerSecond = 10
  let server: Awaited<ReturnType<typeof startCountingServer>>
  before(async () => {
    server = await startCountingServer(lookupsPerSecond)
    // The valid key is admitted once, as a client using it would have been.
    assert.equal((await server.send(server.storedKey, "127.0.2.1")).status, 200)
  })
  after(() => server.close())

  it(`looks up at most ${lookupsPerSecond} a second, and valid keys are served throughout`, async () => {
    const before = server.calls.lookups
    const started = performance.now()
    const addresses = Array.from({ length: 50 }, (_, i) => `127.0.1.${i + 1}`)
    const flood = addresses.flatMap((from) =>
      Array.from({ length: 15 }, () => () => server.send(generateApiKey(), from)),
    )
    const answers: Array<Answer> = []
    const valid: Array<number> = []
    const worker = async () => {
      for (let next = flood.shift(); next !== undefined; next = flood.shift()) {
        answers.push(await next())
      }
    }
    const checkValid = async () => {
      while (flood.length > 0) {
        await sleep(decisionTtlMs * 2)
        valid.push((await server.send(server.storedKey, "127.0.2.1")).status)
      }
    }
    await Promise.all([...Array.from({ length: 16 }, worker), checkValid()])
    const seconds = (performance.now() - started) / 1000
    const lookups = server.calls.lookups - before - valid.length
    const bound = lookupsPerSecond + Math.ceil(lookupsPerSecond * seconds)
    assert.ok(lookups <= bound, `${lookups} look-ups in ${seconds.toFixed(2)} s; bound ${bound}`)
    assert.equal(answers.length, 750)
    const statuses = new Set(answers.map((answer) => answer.status))
    assert.deepEqual([...statuses].sort(), [401, 429], "some looked up and refused, some deferred")
    for (const answer of answers.filter(({ status }) => status === 429)) {
      assert.equal(answer.headers["retry-after"], "1")
      assert.match(answer.body, /unrecognised keys/)
    }
    assert.ok(valid.length > 0)
    assert.ok(
      valid.every((status) => status === 200),
      `valid key refused: ${valid.join(",")}`,
    )
  })
})
