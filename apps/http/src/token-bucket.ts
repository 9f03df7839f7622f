/** A rate: up to `capacity` requests at once, the bucket refilled evenly over `windowSeconds`. */
export interface Rate {
  readonly capacity: number
  readonly windowSeconds: number
}

/** Milliseconds on a clock that never goes back; `performance.now()` unless a test brings its own. */
export type Clock = () => number

export const monotonicClock: Clock = () => performance.now()

/** What a bucket said to one request. */
export interface Decision {
  readonly allowed: boolean
  /** Whole tokens left after this request. */
  readonly remaining: number
  /**
   * Whole seconds, at least 1, until the bucket holds one more token than `remaining`: while it
   * is empty, how long to wait before retrying.
   */
  readonly secondsToNextToken: number
}

export interface TokenBucketsOptions {
  readonly clock?: Clock | undefined
  /** Buckets kept at most; when reached, full buckets go first, then the oldest. */
  readonly maxBuckets?: number
}

/** Buckets by key, each starting full; see `take` and `peek`. */
export interface TokenBuckets {
  /** Spends one of the key's tokens if it has one. */
  readonly take: (key: string) => Decision
  /** What `take` would decide, spending nothing and keeping no bucket for an unknown key. */
  readonly peek: (key: string) => Decision
  /** How many keys have a bucket now (a full bucket may be dropped: it is what a new one is). */
  readonly size: () => number
}

interface Bucket {
  tokens: number
  updatedAt: number
}

/** The share of `maxBuckets` that eviction brings the table down to, so it runs rarely. */
const evictionTarget = 0.9

/**
 * Token buckets by key, refilled lazily when a key is next seen, so an idle key costs nothing.
 * Memory is bounded by `maxBuckets`: a full bucket is dropped first (a new one starts full, so
 * nothing is lost), and only if every bucket is in use are the oldest dropped.
 */
export const tokenBuckets = (rate: Rate, options: TokenBucketsOptions = {}): TokenBuckets => {
  const clock = options.clock ?? monotonicClock
  const maxBuckets = options.maxBuckets ?? 100_000
  const msPerToken = (rate.windowSeconds * 1000) / rate.capacity
  const buckets = new Map<string, Bucket>()

  const refilled = (bucket: Bucket, now: number): number =>
    Math.min(rate.capacity, bucket.tokens + Math.max(0, now - bucket.updatedAt) / msPerToken)

  const decision = (allowed: boolean, tokens: number): Decision => {
    const remaining = Math.floor(tokens)
    const msToNext = (remaining + 1 - tokens) * msPerToken
    return { allowed, remaining, secondsToNextToken: Math.max(1, Math.ceil(msToNext / 1000)) }
  }

  const evict = (now: number) => {
    for (const [key, bucket] of buckets) {
      if (refilled(bucket, now) >= rate.capacity) buckets.delete(key)
    }
    const keep = Math.floor(maxBuckets * evictionTarget)
    for (const key of buckets.keys()) {
      if (buckets.size <= keep) break
      buckets.delete(key)
    }
  }

  const take = (key: string): Decision => {
    const now = clock()
    let bucket = buckets.get(key)
    if (bucket === undefined) {
      if (buckets.size >= maxBuckets) evict(now)
      bucket = { tokens: rate.capacity, updatedAt: now }
      buckets.set(key, bucket)
    } else {
      bucket.tokens = refilled(bucket, now)
      bucket.updatedAt = now
    }
    if (bucket.tokens < 1) return decision(false, bucket.tokens)
    bucket.tokens -= 1
    return decision(true, bucket.tokens)
  }

  const peek = (key: string): Decision => {
    const bucket = buckets.get(key)
    const tokens = bucket === undefined ? rate.capacity : refilled(bucket, clock())
    return decision(tokens >= 1, tokens)
  }

  return { take, peek, size: () => buckets.size }
}
