import type { Middleware } from "koa"
import type { Clock, Rate } from "../token-bucket.js"
import type { AuthState } from "./auth.js"
import { failedAuthThrottle } from "./failed-auth-throttle.js"
import { rateLimit, type RefusalScope } from "./rate-limit.js"

/** The limits put around the key check; each is off unless given. */
export interface AbuseLimits {
  /** Requests per API key. */
  readonly perKey?: Rate | undefined
  /** Failed authentications per client address, before 429 replaces 401. */
  readonly failedAuthPerAddress?: Rate | undefined
  /** Whether the client address is the right-most `X-Forwarded-For` entry; false unless given. */
  readonly trustProxy?: boolean | undefined
  /** The clocks of the token buckets; `performance.now()` unless given. */
  readonly clock?: Clock | undefined
  /** Called once per request refused with 429. */
  readonly onRefusal?: ((scope: RefusalScope) => void) | undefined
}

type AuthMiddleware = Middleware<AuthState>

/** `outer` runs first, and `inner` where `outer` calls `next`. */
const around =
  (outer: AuthMiddleware, inner: AuthMiddleware): AuthMiddleware =>
  (ctx, next) =>
    outer(ctx, () => inner(ctx, next))

/**
 * The key check with the abuse limits around it: the failed-auth throttle first (a throttled
 * address is refused before its key is checked), then the key check, then the per-key rate
 * limit (which needs to know the key).
 */
export const withAbuseLimits = (
  requireKey: AuthMiddleware,
  limits: AbuseLimits,
): AuthMiddleware => {
  const { clock, onRefusal } = limits
  const limited = limits.perKey
    ? around(requireKey, rateLimit({ rate: limits.perKey, clock, onRefusal }))
    : requireKey
  return limits.failedAuthPerAddress
    ? around(
        failedAuthThrottle({
          budget: limits.failedAuthPerAddress,
          trustProxy: limits.trustProxy ?? false,
          clock,
          onRefusal,
        }),
        limited,
      )
    : limited
}
