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

/** Milliseconds between two tokens. */
export const tokenInterval = (rate: Rate): number => (rate.windowSeconds * 1000) / rate.capacity

// Token counts are sums of fractions of a millisecond: a hair of slack keeps 3 takes of a
// bucket of 3 from being judged 1e-13 ms over the window.
const slack = 1e-6

/** What a bucket holding `tokens` (a fraction while it refills) says to a request. */
export const decisionOf = (rate: Rate, allowed: boolean, tokens: number): Decision => {
  const remaining = Math.max(0, Math.floor(tokens + slack))
  const msToNext = (remaining + 1 - tokens) * tokenInterval(rate)
  return { allowed, remaining, secondsToNextToken: Math.max(1, Math.ceil(msToNext / 1000 - slack)) }
}

/** A bucket after a request, as GCRA keeps it: the time at which it will be full again. */
export interface Spent {
  readonly allowed: boolean
  /** Tokens held afterwards. */
  readonly tokens: number
  /** When the bucket is full again (`now` or earlier: it is full, nothing needs keeping). */
  readonly fullAt: number
}

/**
 * A token bucket as the generic cell rate algorithm keeps it: one number per key, the time at
 * which the bucket will be full again, rather than a count and a time. `cost` 1 takes a token,
 * -1 gives one back, 0 only looks. A bucket not kept is full, and so is one kept as no time to
 * come (NaN, the past); one kept past the window is empty, never emptier. The Redis script in
 * `redis-buckets.ts` is this same arithmetic.
 */
export const spend = (rate: Rate, fullAt: number | undefined, now: number, cost: number): Spent => {
  const windowMs = rate.windowSeconds * 1000
  const start = fullAt !== undefined && fullAt > now ? Math.min(fullAt, now + windowMs) : now
  const next = Math.max(now, start + cost * tokenInterval(rate))
  const allowed = next - now <= windowMs + slack
  const kept = allowed ? next : start
  return { allowed, tokens: (windowMs - (kept - now)) / tokenInterval(rate), fullAt: kept }
}

/**
 * What refused a request with 429: its API key's rate, its address's failed authentications, or
 * this process's bound on looking up keys it has never admitted.
 */
export type RefusalScope = "key" | "address" | "lookups"
