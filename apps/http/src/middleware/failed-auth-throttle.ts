import type { Middleware } from "koa"
import { apiError, respondWithError } from "../api-error.js"
import { clientAddress } from "../client-address.js"
import { tokenBuckets, type Clock, type Rate } from "../token-bucket.js"
import type { AuthState } from "./auth.js"
import type { RefusalScope } from "./rate-limit.js"

export interface FailedAuthThrottleOptions {
  /** Failed authentications allowed per client address, as a token bucket's rate. */
  readonly budget: Rate
  /** Whether the client address is read from `X-Forwarded-For` (see `clientAddress`). */
  readonly trustProxy: boolean
  readonly clock?: Clock | undefined
  /** Addresses remembered at most; only addresses that failed are remembered at all. */
  readonly maxAddresses?: number
  readonly onRefusal?: ((scope: RefusalScope) => void) | undefined
}

/**
 * Wraps the key check: each 401 to a request that presented credentials spends a token of the
 * client address's budget, and an address with none left gets 429 with `Retry-After` before its
 * key is even looked at, so guessing keys is slow and a valid key does not tell a throttled
 * guesser it was right. Other addresses are unaffected.
 */
export const failedAuthThrottle = (options: FailedAuthThrottleOptions): Middleware<AuthState> => {
  const failures = tokenBuckets(options.budget, {
    clock: options.clock,
    maxBuckets: options.maxAddresses ?? 10_000,
  })
  const proxy = { trustProxy: options.trustProxy }
  return async (ctx, next) => {
    const address = clientAddress(ctx.req, proxy)
    const standing = failures.peek(address)
    if (!standing.allowed) {
      options.onRefusal?.("address")
      ctx.set("Retry-After", String(standing.secondsToNextToken))
      respondWithError(
        ctx,
        apiError(
          "rate_limited",
          `too many failed authentications from this address; retry after ${standing.secondsToNextToken} s`,
        ),
      )
      return
    }
    await next()
    // A request with no credentials guesses nothing; counting it would let one client that
    // forgot its key lock out everyone sharing its address (behind a NAT, say).
    const guessed = ctx.get("Authorization") !== ""
    if (guessed && ctx.state.principal === undefined && ctx.status === 401) failures.take(address)
  }
}
