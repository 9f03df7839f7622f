import type { Middleware } from "koa"
import { apiError, respondWithError } from "../api-error.js"
import { tokenBuckets, type Clock, type Rate } from "../token-bucket.js"
import type { AuthState } from "./auth.js"

/** Who was refused: an API key over its rate, or a client address that failed auth too often. */
export type RefusalScope = "key" | "address"

export interface RateLimitOptions {
  readonly rate: Rate
  readonly clock?: Clock | undefined
  /** Called once per refused request, e.g. to count refusals. */
  readonly onRefusal?: ((scope: RefusalScope) => void) | undefined
}

/** The policy's name in `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers). */
const policyName = '"per-key"'

/**
 * A token bucket per API key: each authenticated request spends a token, and a key with none
 * left gets 429 with `Retry-After`. Runs after authentication (it needs the key's id), and sets
 * the IETF `RateLimit-Policy` and `RateLimit` fields on every response it lets through or refuses.
 * Only admitted keys get a bucket, so unknown tokens cannot grow the table.
 */
export const rateLimit = (options: RateLimitOptions): Middleware<AuthState> => {
  const buckets = tokenBuckets(options.rate, { clock: options.clock })
  const policy = `${policyName};q=${options.rate.capacity};w=${options.rate.windowSeconds}`
  return async (ctx, next) => {
    const principal = ctx.state.principal
    if (principal === undefined) return next()
    const decision = buckets.take(principal.keyId)
    ctx.set("RateLimit-Policy", policy)
    // `t`: the seconds within which no more than `r` requests will be admitted, i.e. until the
    // next token; on a refusal it equals Retry-After, so the two never disagree.
    ctx.set("RateLimit", `${policyName};r=${decision.remaining};t=${decision.secondsToNextToken}`)
    if (decision.allowed) return next()
    options.onRefusal?.("key")
    ctx.set("Retry-After", String(decision.secondsToNextToken))
    respondWithError(
      ctx,
      apiError(
        "rate_limited",
        `this API key has made more than ${options.rate.capacity} requests in ${options.rate.windowSeconds} s; retry after ${decision.secondsToNextToken} s`,
      ),
    )
  }
}
