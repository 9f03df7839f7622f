import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { memoryBucketStore, type Decision } from "@petstore/http"
import { redisBucketStore, type RedisBucketStore } from "@petstore/http/redis"
import { startOwnRedis, type OwnRedis } from "@petstore/test-support/redis-server"
import { Redis } from "ioredis"
import { settings } from "../src/settings/settings.js"

// PETSTORE_REDIS_PREFIX's default is the prefix the library keeps its keys under; the buckets
// in Redis themselves are tested in packages/http.

const takeTimes = async (
  take: (key: string) => Decision | Promise<Decision>,
  key: string,
  times: number,
) => {
  const decisions: Array<Decision> = []
  for (let i = 0; i < times; i++) decisions.push(await take(key))
  return decisions
}

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

  it("keeps the keys it always kept unless told otherwise: the setting's default is that prefix", async () => {
    const fallback = settings.redisPrefix.default
    assert.ok("value" in fallback)
    const unset = await bucketsOf()
    const configured = await bucketsOf(fallback.value)
    await takeTimes(unset.take, "env:1", 2)
    assert.equal((await configured.take("env:1")).allowed, false)
    const reader = new Redis(redis.url)
    try {
      assert.equal(await reader.exists("petstore:limit:key:env:1"), 1)
    } finally {
      reader.disconnect()
    }
  })
})
