import assert from "node:assert/strict"
import { after, before, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Redis } from "ioredis"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import { sendTo, type Answer } from "@petstore/test-support/requests"
import { startOwnRedis, type OwnRedis } from "@petstore/test-support/redis-server"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

/** Keys of `PETSTORE_API_KEYS`: each test uses fresh ones, as each key has a bucket of its own. */
const keys = Array.from({ length: 12 }, (_, i) => `shared-limits-key-${i}`)
const [firstKey = "", secondKey = "", outageKey = "", ...probeKeys] = keys
/** A key whose bucket the test overwrites in Redis, as someone with access to it could. */
const hostileKey = "shared-limits-hostile-key"
/** This deployment's keys in Redis: the servers must keep theirs under it. */
const prefix = "petstore-test:shared-limits:"

const get = (server: RunningServer, key: string, from = "127.0.0.1"): Promise<Answer> =>
  sendTo(server.origin, "/v1/pets", { from, headers: { Authorization: `Bearer ${key}` } })

/** `count` requests with `key`, alternating between the servers; how many were served. */
const servedAlternating = async (
  servers: ReadonlyArray<RunningServer>,
  key: string,
  count = 20,
) => {
  let served = 0
  for (let i = 0; i < count; i++) {
    const answer = await get(servers[i % servers.length] ?? assert.fail(), key)
    if (answer.status === 200) served += 1
    else assertErrorAnswer(answer, 429, "rate_limited")
  }
  return served
}

await withTemporaryPostgresDatabase("limits shared by two processes through Redis", (database) => {
  let redis: OwnRedis
  let servers: ReadonlyArray<RunningServer> = []
  before(async () => {
    redis = await startOwnRedis()
    const env = {
      PETSTORE_REDIS_URL: redis.url,
      PETSTORE_RATE_LIMIT: "5/min",
      PETSTORE_AUTH_FAILURE_LIMIT: "20/min",
      PETSTORE_REDIS_PREFIX: prefix,
    }
    servers = await Promise.all(
      [0, 1].map(() =>
        startServerProcess({ storage: database.url, apiKeys: [...keys, hostileKey], env }),
      ),
    )
  })
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()))
    await redis.kill()
  })

  it(
    "serves a key 5 requests in all across both processes, and a second key its own 5",
    { timeout: processTestTimeout },
    async () => {
      const served = await servedAlternating(servers, firstKey)
      assert.ok(served === 5 || served === 6, `${served} of 20 served`)
      assert.equal(await servedAlternating(servers, secondKey, 10), 5)
    },
  )

  it(
    "spends one budget of wrong keys per address across both processes",
    { timeout: processTestTimeout },
    async () => {
      const statuses: Array<number> = []
      for (let i = 0; i < 26; i++) {
        const server = servers[i % 2] ?? assert.fail()
        statuses.push((await get(server, `wrong-key-${i}`, "127.0.0.60")).status)
      }
      assert.deepEqual(statuses, [...Array(20).fill(401), ...Array(6).fill(429)])
      // The address's valid key is still served.
      assert.equal(
        (await get(servers[0] ?? assert.fail(), probeKeys[0] ?? "", "127.0.0.60")).status,
        200,
      )
    },
  )

  it(
    "keeps its buckets under PETSTORE_REDIS_PREFIX, and a bucket set there to 1e300 is refused with a Retry-After within its window, then expires",
    { timeout: processTestTimeout },
    async () => {
      const bucket = `${prefix}key:env:${keys.length + 1}`
      const writer = new Redis(redis.url)
      try {
        await writer.set(bucket, "1e300")
        for (const server of servers) {
          const answer = await get(server, hostileKey)
          assertErrorAnswer(answer, 429, "rate_limited")
          const retryAfter = answer.headers["retry-after"] ?? ""
          assert.match(retryAfter, /^[1-9][0-9]*$/)
          assert.ok(Number(retryAfter) <= 60, `Retry-After: ${retryAfter}`)
        }
        const ttl = await writer.pttl(bucket)
        assert.ok(ttl > 0 && ttl <= 60_000, `the bucket expires in ${ttl} ms`)
      } finally {
        writer.disconnect()
      }
    },
  )

  it(
    "keeps answering while Redis is killed, and shares again within 10 s of its return",
    { timeout: processTestTimeout },
    async () => {
      await redis.kill()
      const answers: Array<Answer> = []
      const until = performance.now() + 2_000
      for (let i = 0; performance.now() < until; i++) {
        const server = servers[i % 2] ?? assert.fail()
        const started = performance.now()
        answers.push(
          await get(server, i % 3 === 0 ? `wrong-${i}` : outageKey, `127.0.0.${70 + (i % 5)}`),
        )
        assert.ok(performance.now() - started < 1_000, "an answer waited on the absent Redis")
      }
      for (const answer of answers) {
        if (answer.status === 200 || answer.status === 401) continue
        assertErrorAnswer(answer, 429, "rate_limited")
        assert.match(answer.headers["retry-after"] ?? "", /^[1-9][0-9]*$/)
      }
      assert.ok(answers.some((answer) => answer.status === 200))
      for (const server of servers) {
        assert.equal(server.child.exitCode, null, "a server exited")
        const warnings = server
          .stderr()
          .split("\n")
          .filter((line) => line.includes("Redis is not answering"))
        assert.equal(warnings.length, 1, server.stderr())
      }

      await redis.restart()
      const returned = performance.now()
      let shared = false
      for (const key of probeKeys.slice(1)) {
        if ((await servedAlternating(servers, key, 10)) <= 6) {
          shared = true
          break
        }
        await sleep(1_000)
      }
      const seconds = (performance.now() - returned) / 1000
      assert.ok(
        shared && seconds <= 10,
        `not shared again ${seconds.toFixed(1)} s after Redis returned`,
      )
    },
  )
})
