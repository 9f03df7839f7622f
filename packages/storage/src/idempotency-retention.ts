import { IdempotencyKeyInUse, type Idempotency } from "@petstore/core"
import { Duration, Effect, type Scope } from "effect"

/** How long an adapter remembers idempotency keys; the same on every adapter. */
export interface IdempotencyOptions {
  /**
   * How long a key is remembered after the create that stored it; after that the same key
   * creates a new pet. 24 hours unless given.
   */
  readonly idempotencyTtl?: Duration.DurationInput
  /** How often expired keys are deleted, in the background; every 5 minutes unless given. */
  readonly idempotencyPurgeInterval?: Duration.DurationInput
}

export const defaultIdempotencyTtl = Duration.hours(24)
export const defaultIdempotencyPurgeInterval = Duration.minutes(5)

/** The retention time in milliseconds. */
export const idempotencyTtlMillis = (options: IdempotencyOptions): number =>
  Math.round(Duration.toMillis(options.idempotencyTtl ?? defaultIdempotencyTtl))

/** One string per scope and key, so that no two (scope, key) pairs share it. */
export const claimId = (claim: Idempotency): string => JSON.stringify([claim.scope, claim.key])

/**
 * The claims whose create has not finished in this process. `guard` runs a create unless its
 * scope and key are already in flight (then it fails at once with `IdempotencyKeyInUse`), and
 * releases the claim however the create ends, interruption included. Nothing of it is stored, so
 * no mark outlives the process.
 */
export const makeInFlightClaims = () => {
  const inFlight = new Set<string>()
  return <A, E>(
    claim: Idempotency,
    create: Effect.Effect<A, E>,
  ): Effect.Effect<A, E | IdempotencyKeyInUse> => {
    const id = claimId(claim)
    return Effect.acquireUseRelease(
      Effect.suspend(() => {
        if (inFlight.has(id)) return Effect.fail(new IdempotencyKeyInUse({ key: claim.key }))
        inFlight.add(id)
        return Effect.void
      }),
      () => create,
      () => Effect.sync(() => inFlight.delete(id)),
    )
  }
}

/**
 * Runs `purge` every `interval` in a fiber of the current scope, off the request path. A purge
 * that fails is logged and tried again at the next interval.
 */
export const purgeInBackground = <E>(
  purge: Effect.Effect<unknown, E>,
  options: IdempotencyOptions,
): Effect.Effect<void, never, Scope.Scope> => {
  const interval = options.idempotencyPurgeInterval ?? defaultIdempotencyPurgeInterval
  return Effect.asVoid(
    Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(interval),
          Effect.catchAllCause(purge, (cause) =>
            Effect.logWarning("purging expired idempotency keys failed", cause),
          ),
        ),
      ),
    ),
  )
}
