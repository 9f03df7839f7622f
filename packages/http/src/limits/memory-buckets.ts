import { LRUCache } from "lru-cache"
import type { BucketStore, Buckets } from "./Buckets.js"
import { decisionOf, monotonicClock, spend, type Clock, type Decision, type Rate } from "./rate.js"

/** Buckets that answer at once. */
export interface MemoryBuckets extends Buckets {
  readonly take: (key: string) => Decision
  readonly giveBack: (key: string) => void
}

/**
 * Buckets in this process's memory. Each key keeps one number (when its bucket is full again)
 * and only until then, so an idle key costs nothing; at most `maxKeys` are kept, the least
 * recently used dropped first (it restarts full).
 */
export const memoryBuckets = (
  rate: Rate,
  maxKeys: number,
  clock: Clock = monotonicClock,
): MemoryBuckets => {
  const fullAt = new LRUCache<string, number>({ max: maxKeys, perf: { now: clock } })
  const keep = (key: string, until: number, now: number) => {
    if (until > now) fullAt.set(key, until, { ttl: Math.ceil(until - now) })
    else fullAt.delete(key)
  }
  return {
    take: (key) => {
      const now = clock()
      const spent = spend(rate, fullAt.get(key), now, 1)
      if (spent.allowed) keep(key, spent.fullAt, now)
      return decisionOf(rate, spent.allowed, spent.tokens)
    },
    giveBack: (key) => {
      const now = clock()
      keep(key, spend(rate, fullAt.get(key), now, -1).fullAt, now)
    },
  }
}

/** Every limit's buckets in this process's memory, on one clock. */
export const memoryBucketStore = (clock: Clock = monotonicClock): BucketStore => ({
  buckets: (_name, rate, maxKeys) => memoryBuckets(rate, maxKeys, clock),
})
