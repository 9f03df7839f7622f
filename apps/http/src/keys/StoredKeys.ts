import { StorageUnavailable } from "@petstore/core"
import { ApiKeyStore } from "@petstore/storage"
import {
  Cause,
  Context,
  Duration,
  Effect,
  Exit,
  Layer,
  Option,
  Runtime,
  Schedule,
  type Scope,
} from "effect"
import { LRUCache } from "lru-cache"
import { hashApiKey, isWellFormedApiKey } from "./api-key-format.js"
import { lastUseRecorder } from "./last-use-recorder.js"

/** What the store says of a presented key. */
export type StoredKeyVerdict =
  | { readonly kind: "admitted"; readonly keyId: string }
  | { readonly kind: "unknown" }
  | { readonly kind: "unavailable"; readonly error: StorageUnavailable }

export interface StoredKeysOptions {
  /** How long a verdict is reused before the store is asked again; 1 s unless given. */
  readonly decisionTtl?: Duration.DurationInput
  /** The most verdicts kept (admitted and refused alike); 10,000 unless given. */
  readonly maxDecisions?: number
  /** A key's last use is written at most once per this; 1 minute unless given. */
  readonly lastUseInterval?: Duration.DurationInput
  /** How often noted uses are written; 1 s unless given. */
  readonly lastUseFlushInterval?: Duration.DurationInput
}

/**
 * Bounds revocation: a revoked key stops working on every process within this plus one store
 * query. Two seconds are promised.
 */
export const defaultDecisionTtl = Duration.seconds(1)
export const defaultMaxDecisions = 10_000
export const defaultLastUseInterval = Duration.minutes(1)
export const defaultLastUseFlushInterval = Duration.seconds(1)

const unknown: StoredKeyVerdict = { kind: "unknown" }

/**
 * The stored keys as the key check sees them. Verdicts are cached by the key's hash for a second
 * (admitted and refused, in one bounded LRU cache), concurrent look-ups of one key share a query,
 * and a malformed key (bad prefix, shape or checksum) is refused without one. Uses are noted in
 * memory and written in the background.
 */
export class StoredKeys extends Context.Tag("@petstore/http/StoredKeys")<
  StoredKeys,
  {
    /** Which stored key `token` is. Rejects only on a defect (a bug or broken data). */
    readonly identify: (token: string) => Promise<StoredKeyVerdict>
  }
>() {}

export const make = (
  options: StoredKeysOptions = {},
): Effect.Effect<StoredKeys["Type"], never, ApiKeyStore | Scope.Scope> =>
  Effect.gen(function* () {
    const store = yield* ApiKeyStore
    const runPromiseExit = Runtime.runPromiseExit(yield* Effect.runtime<never>())
    const recorder = lastUseRecorder(
      Duration.toMillis(options.lastUseInterval ?? defaultLastUseInterval),
    )

    const decisions = new LRUCache<string, StoredKeyVerdict>({
      max: options.maxDecisions ?? defaultMaxDecisions,
      ttl: Duration.toMillis(options.decisionTtl ?? defaultDecisionTtl),
    })
    const verdictOf = (exit: Exit.Exit<Option.Option<string>, StorageUnavailable>) => {
      if (Exit.isSuccess(exit)) {
        return Option.match(exit.value, {
          onNone: (): StoredKeyVerdict => unknown,
          onSome: (keyId): StoredKeyVerdict => ({ kind: "admitted", keyId }),
        })
      }
      return Option.match(Cause.failureOption(exit.cause), {
        onNone: () => {
          throw Cause.squash(exit.cause)
        },
        onSome: (error): StoredKeyVerdict => ({ kind: "unavailable", error }),
      })
    }
    // Requests for one key that arrive while it is being looked up share the look-up. An
    // unavailable store's answer is not kept: the next request asks again.
    const inFlight = new Map<string, Promise<StoredKeyVerdict>>()
    const lookUp = (hash: string): Promise<StoredKeyVerdict> => {
      const pending = inFlight.get(hash)
      if (pending !== undefined) return pending
      const lookingUp = runPromiseExit(store.findIdByHash(hash))
        .then((exit) => {
          const verdict = verdictOf(exit)
          if (verdict.kind !== "unavailable") decisions.set(hash, verdict)
          return verdict
        })
        .finally(() => inFlight.delete(hash))
      inFlight.set(hash, lookingUp)
      return lookingUp
    }

    const writeUses = Effect.suspend(() => {
      const uses = recorder.take(Date.now())
      return uses.length === 0
        ? Effect.void
        : Effect.catchAllCause(store.recordUses(uses), () =>
            Effect.sync(() => recorder.unwritten(uses)),
          )
    })
    yield* Effect.forkScoped(
      Effect.repeat(
        writeUses,
        Schedule.spaced(options.lastUseFlushInterval ?? defaultLastUseFlushInterval),
      ),
    )
    // The uses noted since the last write are written as the service stops.
    yield* Effect.addFinalizer(() => writeUses)

    return StoredKeys.of({
      identify: async (token) => {
        if (!isWellFormedApiKey(token)) return unknown
        const hash = hashApiKey(token)
        const verdict = decisions.get(hash) ?? (await lookUp(hash))
        if (verdict.kind === "admitted") recorder.note(verdict.keyId, Date.now())
        return verdict
      },
    })
  })

export const layer = (
  options: StoredKeysOptions = {},
): Layer.Layer<StoredKeys, never, ApiKeyStore> => Layer.scoped(StoredKeys, make(options))
