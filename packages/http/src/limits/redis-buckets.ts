import { createHash } from "node:crypto"
import { Redis } from "ioredis"
import type { BucketStore, Buckets } from "./Buckets.js"
import { decisionOf, tokenInterval, type Decision, type Rate } from "./rate.js"

/**
 * `spend` of `rate.ts` in one atomic step on the Redis server, on the server's clock (so the
 * processes sharing it need no synchronised clocks). The key holds the time at which the bucket
 * is full again and expires then: a full bucket is no key at all. What the key holds is not
 * trusted, as anyone who can write to Redis can change it: a time past the window is read as the
 * window's end (an empty bucket), anything else that is not a time to come (no number, NaN, a
 * past time, another type of key) as a full bucket, and a key that would outlive its window is
 * given the expiry it should have had.
 */
const spendScript = `
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local time = redis.call("TIME")
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local held = tonumber(redis.pcall("GET", KEYS[1]))
local start = now
if held ~= nil and held > now then
  start = math.min(held, now + window)
end
local next = math.max(now, start + cost * interval)
local allowed = next - now <= window + 0.000001
local kept = start
if allowed then
  kept = next
end
local function expiresWithinWindow()
  local ttl = redis.call("PTTL", KEYS[1])
  return ttl >= 0 and ttl <= window
end
if kept <= now then
  redis.call("DEL", KEYS[1])
elseif kept ~= held or not expiresWithinWindow() then
  redis.call("SET", KEYS[1], string.format("%.3f", kept), "PX", math.ceil(kept - now))
end
return { allowed and 1 or 0, string.format("%.6f", (window - (kept - now)) / interval) }
`
const spendScriptSha = createHash("sha1").update(spendScript).digest("hex")

/** How long one call to Redis may take before the process decides on its own. */
export const redisCallTimeoutMs = 50
/** After a failed call, how long decisions stay in the process before Redis is tried again. */
export const redisRetryMs = 1_000

export interface RedisBucketStoreOptions {
  /** A `redis://` (or `rediss://`) URL. */
  readonly url: string
  /** Decides while Redis cannot: the per-process buckets. */
  readonly fallback: BucketStore
  /** Once per outage, at the first call that failed. */
  readonly onOutage?: (cause: unknown) => void
  /** Once Redis answers again after an outage. */
  readonly onRecovery?: () => void
  /** Each decision the fallback made because Redis could not. */
  readonly onFallback?: () => void
  /** Prefixes every key the limits keep; `petstore:limit:` unless given. */
  readonly keyPrefix?: string
}

export interface RedisBucketStore {
  readonly store: BucketStore
  /** Resolves true once connected, false if not within `ms` (the store works either way). */
  readonly connected: (ms: number) => Promise<boolean>
  readonly close: () => Promise<void>
}

const spendReply = (reply: unknown): { readonly allowed: boolean; readonly tokens: number } => {
  if (Array.isArray(reply) && reply.length === 2) {
    const [allowed, tokens] = reply
    if ((allowed === 0 || allowed === 1) && typeof tokens === "string") {
      return { allowed: allowed === 1, tokens: Number(tokens) }
    }
  }
  throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`)
}

/**
 * Buckets shared by every process that names the same Redis: one round trip per decision
 * (`EVALSHA`, pipelined with the other requests of the same moment). A call that fails or takes
 * longer than `redisCallTimeoutMs` is decided by the fallback instead, and for `redisRetryMs`
 * every call is; then Redis is tried again, so limits are shared again soon after it returns.
 */
export const redisBucketStore = (options: RedisBucketStoreOptions): RedisBucketStore => {
  const redis = new Redis(options.url, {
    commandTimeout: redisCallTimeoutMs,
    // A call while disconnected fails at once rather than waiting in a queue.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    enableAutoPipelining: true,
    retryStrategy: (attempt) => Math.min(attempt * 100, redisRetryMs),
  })
  // Failures are seen, and told once per outage, through the calls; the client's own error
  // events would otherwise be printed by Node as unhandled.
  redis.on("error", () => {})
  const prefix = options.keyPrefix ?? "petstore:limit:"
  let down = false
  let retryAt = 0

  const failed = (cause: unknown) => {
    retryAt = performance.now() + redisRetryMs
    if (down) return
    down = true
    options.onOutage?.(cause)
  }
  const answered = () => {
    if (!down) return
    down = false
    options.onRecovery?.()
  }

  const evalSpend = async (key: string, rate: Rate, cost: number) => {
    const args = [1, key, tokenInterval(rate), rate.windowSeconds * 1000, cost] as const
    try {
      return spendReply(await redis.evalsha(spendScriptSha, ...args))
    } catch (error) {
      if (!(error instanceof Error && error.message.startsWith("NOSCRIPT"))) throw error
      return spendReply(await redis.eval(spendScript, ...args))
    }
  }

  const buckets = (name: string, rate: Rate, maxKeys: number): Buckets => {
    const fallback = options.fallback.buckets(name, rate, maxKeys)
    const keyOf = (key: string) => `${prefix}${name}:${key}`
    const decideLocally = (key: string) => {
      options.onFallback?.()
      return fallback.take(key)
    }
    return {
      take: async (key): Promise<Decision> => {
        if (performance.now() < retryAt) return decideLocally(key)
        try {
          const { allowed, tokens } = await evalSpend(keyOf(key), rate, 1)
          answered()
          return decisionOf(rate, allowed, tokens)
        } catch (cause) {
          failed(cause)
          return decideLocally(key)
        }
      },
      giveBack: async (key) => {
        if (performance.now() < retryAt) return fallback.giveBack(key)
        try {
          await evalSpend(keyOf(key), rate, -1)
          answered()
        } catch (cause) {
          failed(cause)
          await fallback.giveBack(key)
        }
      },
    }
  }

  return {
    store: { buckets },
    connected: (ms) =>
      new Promise((resolve) => {
        if (redis.status === "ready") return resolve(true)
        const timer = setTimeout(() => resolve(false), ms)
        redis.once("ready", () => {
          clearTimeout(timer)
          resolve(true)
        })
      }),
    close: async () => {
      redis.disconnect()
    },
  }
}
