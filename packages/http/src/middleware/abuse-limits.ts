import type { TrustedProxies } from "../request/client-address.js"
import type { BucketStore } from "../limits/Buckets.js"
import { memoryBucketStore } from "../limits/memory-buckets.js"
import type { Clock, Rate, RefusalScope } from "../limits/rate.js"
import type { Throttle } from "./require-key.js"

/** The limits put around the key check; each is off unless given. */
export interface AbuseLimits {
  /** Requests per API key. */
  readonly perKey?: Rate | undefined
  /** Wrong keys per client address, before they are answered 429 without being checked. */
  readonly failedAuthPerAddress?: Rate | undefined
  /** The proxies whose `X-Forwarded-For` names the client; none unless given. */
  readonly trustedProxies?: TrustedProxies | undefined
  /** Where the buckets are kept; this process's memory, on `clock`, unless given. */
  readonly store?: BucketStore | undefined
  /** The clock of the in-memory buckets; `performance.now()` unless given. */
  readonly clock?: Clock | undefined
  /** Called once per request refused with 429. */
  readonly onRefusal?: ((scope: RefusalScope) => void) | undefined
}

/** Buckets kept in memory at most, per limit: keys are few, addresses many but only failing ones. */
const maxKeyBuckets = 100_000
const maxAddressBuckets = 10_000

/** Each configured limit with its buckets (named `key` and `address` in a shared store). */
export const configuredLimits = (limits: AbuseLimits) => {
  const store = limits.store ?? memoryBucketStore(limits.clock)
  const limit = (name: string, rate: Rate | undefined, maxKeys: number): Throttle | undefined =>
    rate && { rate, buckets: store.buckets(name, rate, maxKeys) }
  return {
    perKey: limit("key", limits.perKey, maxKeyBuckets),
    failedAuthPerAddress: limit("address", limits.failedAuthPerAddress, maxAddressBuckets),
  }
}
