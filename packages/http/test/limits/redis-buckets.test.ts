import assert from "node:assert/strict"
import { randomUUID } from "node:crypto"
import { after, before, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { sharedRedisUrl, startOwnRedis, type OwnRedis } from "@petstore/test-support/redis-server"
import { Redis } from "ioredis"
import { memoryBucketStore, type Decision } from "../../src/index.js"
import { redisBucketStore, type RedisBucketStore } from "../../src/limits/redis-buckets.js"
import { manualClock } from "../harness/limited-server.js"

const fivePerMinute = { capacity: 5, windowSeconds: 60 }

const takeTimes = async (
  take: (key: string) => Decision | Promise<Decision>,
  key: string,
  times: number,
) => {
  const decisions: Array<Decision> = []
  for (let i = 0; i < times; i++) decisions.push(await take(key))
  return decisions
}

describe("buckets in memory and in Redis agree (GCRA, a bucket of n refilled evenly)", () => {
  let shared: RedisBucketStore
  before(async () => {
    shared = redisBucketStore({
      url: sharedRedisUrl,
      fallback: memoryBucketStore(),
      keyPrefix: `petstore-test:${randomUUID()}:`,
      onFallback: () => assert.fail("the shared Redis did not answer"),
    })
    assert.ok(await shared.connected(2_000), "the shared Redis at 127.0.0.1:6379 is not running")
  })
  after(() => shared.close())

  it("starts full, refuses past the capacity, and says when the next token comes", async () => {
    const clock = manualClock()
    const inMemory = memoryBucketStore(clock.now).buckets("key", fivePerMinute, 10)
    const inRedis = shared.store.buckets("key", fivePerMinute, 10)
    const expected = [
      { allowed: true, remaining: 4, secondsToNextToken: 12 },
      { allowed: true, remaining: 3, secondsToNextToken: 12 },
      { allowed: true, remaining: 2, secondsToNextToken: 12 },
      { allowed: true, remaining: 1, secondsToNextToken: 12 },
      { allowed: true, remaining: 0, secondsToNextToken: 12 },
      { allowed: false, remaining: 0, secondsToNextToken: 12 },
    ]
    assert.deepEqual(await takeTimes(inMemory.take, "a", 6), expected)
    assert.deepEqual(await takeTimes(inRedis.take, "a", 6), expected)
    // Each key and each limit has a bucket of its own.
    assert.equal((await inRedis.take("b")).remaining, 4)
    assert.equal((await shared.store.buckets("other", fivePerMinute, 10).take("a")).remaining, 4)
  })

  it("gives a token back, never beyond a full bucket", async () => {
    const inRedis = shared.store.buckets("give-back", { capacity: 2, windowSeconds: 60 }, 10)
    await takeTimes(inRedis.take, "a", 2)
    assert.equal((await inRedis.take("a")).allowed, false)
    await inRedis.giveBack("a")
    assert.deepEqual(await inRedis.take("a"), {
      allowed: true,
      remaining: 0,
      secondsToNextToken: 30,
    })
    await inRedis.giveBack("fresh")
    await inRedis.giveBack("fresh")
    assert.equal((await inRedis.take("fresh")).remaining, 1)
  })

  it("refills evenly, on Redis's clock", async () => {
    const inRedis = shared.store.buckets("refill", { capacity: 10, windowSeconds: 1 }, 10)
    await takeTimes(inRedis.take, "a", 10)
    assert.equal((await inRedis.take("a")).allowed, false)
    await sleep(250)
    const after = await takeTimes(inRedis.take, "a", 3)
    assert.deepEqual(
      after.map((decision) => decision.allowed),
      [true, true, false],
      "two tokens back in 250 ms at 10/s",
    )
  })
})

describe("buckets in Redis while Redis is away", () => {
  let redis: OwnRedis
  let limits: RedisBucketStore
  const events: Array<string> = []
  let decidedLocally = 0
  before(async () => {
    redis = await startOwnRedis()
    limits = redisBucketStore({
      url: redis.url,
      fallback: memoryBucketStore(),
      onOutage: () => events.push("outage"),
      onRecovery: () => events.push("recovery"),
      onFallback: () => (decidedLocally += 1),
    })
    assert.ok(await limits.connected(2_000))
  })
  after(async () => {
    redis.resume()
    await limits.close()
    await redis.kill()
  })

  it("decides in the process within the call's bound when Redis is killed, and tells it once", async () => {
    const buckets = limits.store.buckets("outage", fivePerMinute, 10)
    assert.equal((await buckets.take("k")).remaining, 4)
    await redis.kill()
    for (let i = 0; i < 20; i++) {
      const started = performance.now()
      const decision = await buckets.take(`k${i % 2}`)
      assert.ok(performance.now() - started < 200, "a decision waited on a Redis that is gone")
      assert.equal(typeof decision.allowed, "boolean")
    }
    assert.deepEqual(events, ["outage"])
    assert.ok(decidedLocally >= 20)
  })

  it("shares again by itself within 10 s of Redis returning, and tells it once", async () => {
    await redis.restart()
    const buckets = limits.store.buckets("return", fivePerMinute, 10)
    const deadline = performance.now() + 10_000
    const before = decidedLocally
    while (events.length < 2 && performance.now() < deadline) {
      await buckets.take("probe")
      await sleep(100)
    }
    assert.deepEqual(events, ["outage", "recovery"])
    const counted = decidedLocally
    await buckets.take("after")
    assert.equal(decidedLocally, counted, "decided locally after Redis returned")
    assert.ok(counted > before, "Redis was reached at once: the retry pause did not hold")
  })

  it("answers within the call's bound while Redis hangs (SIGSTOP), and recovers after", async () => {
    const buckets = limits.store.buckets("paused", fivePerMinute, 10)
    await buckets.take("k")
    redis.pause()
    try {
      const started = performance.now()
      const decisions = await Promise.all(Array.from({ length: 50 }, () => buckets.take("k")))
      const elapsed = performance.now() - started
      assert.ok(elapsed < 500, `50 decisions took ${elapsed.toFixed(0)} ms with Redis hung`)
      assert.equal(decisions.length, 50)
      assert.deepEqual(events.slice(2), ["outage"])
    } finally {
      redis.resume()
    }
    const deadline = performance.now() + 10_000
    while (events.length < 4 && performance.now() < deadline) {
      await buckets.take("probe")
      await sleep(100)
    }
    assert.deepEqual(events.slice(2), ["outage", "recovery"])
  })
})

describe("buckets in Redis trust no value they read (#30)", () => {
  const prefix = `petstore-test:${randomUUID()}:`
  let shared: RedisBucketStore
  let writer: Redis
  before(async () => {
    shared = redisBucketStore({
      url: sharedRedisUrl,
      fallback: memoryBucketStore(),
      keyPrefix: prefix,
      onFallback: () => assert.fail("the shared Redis did not answer"),
    })
    writer = new Redis(sharedRedisUrl)
    assert.ok(await shared.connected(2_000), "the shared Redis at 127.0.0.1:6379 is not running")
  })
  after(async () => {
    await shared.close()
    writer.disconnect()
  })

  const windowMs = fivePerMinute.windowSeconds * 1000
  /** Redis's clock in milliseconds, the one the script reads. */
  const redisNow = async () => {
    const [seconds = 0, micros = 0] = await writer.time()
    return Number(seconds) * 1000 + Number(micros) / 1000
  }
  /** Whether the key expires, and within the bucket's window. */
  const assertExpiresWithinWindow = async (key: string, label: string) => {
    const ttl = await writer.pttl(key)
    assert.ok(ttl > 0 && ttl <= windowMs, `${label}: the key expires in ${ttl} ms`)
  }

  it("takes a bucket kept past its window as an empty one, refilling and expiring within the window", async () => {
    const buckets = shared.store.buckets("far", fivePerMinute, 10)
    const farValues = ["1e300", "inf", String((await redisNow()) + 100 * windowMs)]
    for (const [index, value] of farValues.entries()) {
      await writer.set(`${prefix}far:${index}`, value)
      assert.deepEqual(
        await buckets.take(String(index)),
        { allowed: false, remaining: 0, secondsToNextToken: 12 },
        value,
      )
      await assertExpiresWithinWindow(`${prefix}far:${index}`, value)
      const kept = Number(await writer.get(`${prefix}far:${index}`))
      assert.ok(kept <= (await redisNow()) + windowMs, `${value}: kept as ${kept}`)
    }
  })

  it("takes a value that is no time to come (negative, not a number, not a string) as a full bucket", async () => {
    const buckets = shared.store.buckets("garbage", fivePerMinute, 10)
    const values = ["-5", "-inf", "nan", "-nan", "abc", "", "0"]
    for (const [index, value] of values.entries()) {
      await writer.set(`${prefix}garbage:${index}`, value)
      assert.deepEqual(
        await buckets.take(String(index)),
        { allowed: true, remaining: 4, secondsToNextToken: 12 },
        JSON.stringify(value),
      )
      await assertExpiresWithinWindow(`${prefix}garbage:${index}`, JSON.stringify(value))
    }
    await writer.hset(`${prefix}garbage:hash`, "fullAt", "1e300")
    assert.deepEqual(await buckets.take("hash"), {
      allowed: true,
      remaining: 4,
      secondsToNextToken: 12,
    })
    await assertExpiresWithinWindow(`${prefix}garbage:hash`, "a hash")
  })

  it("bounds the expiry of a bucket kept without one, or with one past its full time", async () => {
    const buckets = shared.store.buckets("ttl", fivePerMinute, 10)
    // 55 s to full: 5/12 of a token, so the next take is refused and nothing is written.
    const fullAt = String((await redisNow()) + windowMs - 5_000)
    await writer.set(`${prefix}ttl:none`, fullAt)
    await writer.set(`${prefix}ttl:long`, fullAt, "PX", 1e12)
    for (const key of ["none", "long"]) {
      const decision = await buckets.take(key)
      assert.equal(decision.allowed, false, key)
      assert.ok(decision.secondsToNextToken <= 12, `${key}: ${decision.secondsToNextToken} s`)
      const ttl = await writer.pttl(`${prefix}ttl:${key}`)
      assert.ok(ttl > 0 && ttl <= windowMs - 5_000, `${key}: the key expires in ${ttl} ms`)
    }
  })
})

describe("buckets in Redis under a key prefix", () => {
  let redis: OwnRedis
  const stores: Array<RedisBucketStore> = []
  const twoPerMinute = { capacity: 2, windowSeconds: 60 }
  const bucketsOf = async (keyPrefix?: string) => {
    const store = redisBucketStore({
      url: redis.url,
      fallback: memoryBucketStore(),
      ...(keyPrefix === undefined ? {} : { keyPrefix }),
      onFallback: () => assert.fail("the test's Redis did not answer"),
    })
    stores.push(store)
    assert.ok(await store.connected(2_000))
    return store.store.buckets("key", twoPerMinute, 10)
  }
  before(async () => {
    redis = await startOwnRedis()
  })
  after(async () => {
    await Promise.all(stores.map((store) => store.close()))
    await redis.kill()
  })

  it("keeps apart the buckets of two prefixes for the same key, and shares those of one prefix", async () => {
    const blue = await bucketsOf("blue:")
    const alsoBlue = await bucketsOf("blue:")
    const green = await bucketsOf("green:")
    await takeTimes(blue.take, "env:1", 2)
    assert.equal((await alsoBlue.take("env:1")).allowed, false, "one prefix, one bucket")
    assert.deepEqual(
      (await takeTimes(green.take, "env:1", 3)).map((decision) => decision.allowed),
      [true, true, false],
      "another prefix, a bucket of its own",
    )
  })
})
