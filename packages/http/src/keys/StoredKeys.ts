import { StorageUnavailable } from "@petstore/core"
import { ApiKeyStore } from "@petstore/core"
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
import { memoryBuckets } from "../limits/memory-buckets.js"
import { hashApiKey, isWellFormedApiKey } from "@petstore/core"
import { lastUseRecorder } from "./last-use-recorder.js"

/** What the store says of a presented key. */
export type StoredKeyVerdict =
  | { readonly kind: "admitted"; readonly keyId: string }
  | { readonly kind: "unknown" }
  | { readonly kind: "unavailable"; readonly error: StorageUnavailable }
  /** Not looked up: this process is already looking up as many unknown keys as it may. */
  | { readonly kind: "deferred" }

/** A verdict remembered for `decisionTtl`. */
type Decided = Extract<StoredKeyVerdict, { readonly kind: "admitted" | "unknown" }>

/** A key the store must be asked about: nothing remembered says yes or no. */
export interface StoredKeyQuestion {
  readonly kind: "ask"
  /**
   * Whether this process has admitted the key before (within `knownKeyTtl`): its look-up is a
   * check for revocation, not a guess, and is never deferred.
   */
  readonly admittedBefore: boolean
  readonly lookUp: () => Promise<StoredKeyVerdict>
}

/** What is known of a presented key without I/O, or the question to ask the store. */
export type StoredKeyCheck = Decided | StoredKeyQuestion

export interface StoredKeysOptions {
  /** How long a verdict is reused before the store is asked again; 1 s unless given. */
  readonly decisionTtl?: Duration.DurationInput
  /** The most verdicts kept (admitted and refused alike); 10,000 unless given. */
  readonly maxDecisions?: number
  /** A key's last use is written at most once per this; 1 minute unless given. */
  readonly lastUseInterval?: Duration.DurationInput
  /** How often noted uses are written; 1 s unless given. */
  readonly lastUseFlushInterval?: Duration.DurationInput
  /** How long an admitted key's look-ups stay exempt from `maxUnknownLookupsPerSecond`; 1 day unless given. */
  readonly knownKeyTtl?: Duration.DurationInput
  /**
   * Look-ups per second, in this process, of keys it has not admitted before: a flood of made-up
   * keys from many addresses reaches the store at most this often. 100 unless given.
   */
  readonly maxUnknownLookupsPerSecond?: number
}

/**
 * Bounds revocation: a revoked key stops working on every process within this plus one store
 * query. Two seconds are promised.
 */
export const defaultDecisionTtl = Duration.seconds(1)
export const defaultMaxDecisions = 10_000
export const defaultLastUseInterval = Duration.minutes(1)
export const defaultLastUseFlushInterval = Duration.seconds(1)
export const defaultKnownKeyTtl = Duration.days(1)
export const defaultMaxUnknownLookupsPerSecond = 100
/** Keys remembered as admitted before; far more than any deployment issues. */
const maxKnownKeys = 100_000

const unknown = { kind: "unknown" } as const
const deferred: StoredKeyVerdict = { kind: "deferred" }

/**
 * The stored keys as the key check sees them. Verdicts are cached by the key's hash for a second
 * (admitted and refused, in one bounded LRU cache), concurrent look-ups of one key share a query,
 * and a malformed key (bad prefix, shape or checksum) is refused without one. Keys never admitted
 * here are looked up at most `maxUnknownLookupsPerSecond`; keys admitted before always are. Uses
 * are noted in memory and written in the background.
 */
export class StoredKeys extends Context.Tag("@petstore/http/StoredKeys")<
  StoredKeys,
  {
    /** What is known of `token` without I/O: a remembered verdict, or the question to ask. */
    readonly check: (token: string) => StoredKeyCheck
    /** Which stored key `token` is, asking the store if need be. Rejects only on a defect. */
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

    const decisions = new LRUCache<string, Decided>({
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
    const known = new LRUCache<string, true>({
      max: maxKnownKeys,
      ttl: Duration.toMillis(options.knownKeyTtl ?? defaultKnownKeyTtl),
    })
    const unknownLookups = memoryBuckets(
      {
        capacity: options.maxUnknownLookupsPerSecond ?? defaultMaxUnknownLookupsPerSecond,
        windowSeconds: 1,
      },
      1,
    )
    // Requests for one key that arrive while it is being looked up share the look-up. An
    // unavailable store's answer is not kept: the next request asks again.
    const inFlight = new Map<string, Promise<StoredKeyVerdict>>()
    const lookUp = (hash: string): Promise<StoredKeyVerdict> => {
      const pending = inFlight.get(hash)
      if (pending !== undefined) return pending
      const lookingUp = runPromiseExit(store.findIdByHash(hash))
        .then((exit) => {
          const verdict = verdictOf(exit)
          if (verdict.kind === "admitted") known.set(hash, true)
          if (verdict.kind === "unknown") known.delete(hash)
          if (verdict.kind === "admitted" || verdict.kind === "unknown") {
            decisions.set(hash, verdict)
          }
          return verdict
        })
        .finally(() => inFlight.delete(hash))
      inFlight.set(hash, lookingUp)
      return lookingUp
    }
    const ask = (hash: string): StoredKeyQuestion => {
      const admittedBefore = known.has(hash)
      return {
        kind: "ask",
        admittedBefore,
        lookUp: () => {
          const sharing = inFlight.has(hash)
          if (!admittedBefore && !sharing && !unknownLookups.take("all").allowed) {
            return Promise.resolve(deferred)
          }
          return lookUp(hash)
        },
      }
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

    const noteUse = (verdict: StoredKeyVerdict): StoredKeyVerdict => {
      if (verdict.kind === "admitted") recorder.note(verdict.keyId, Date.now())
      return verdict
    }
    const check = (token: string): StoredKeyCheck => {
      if (!isWellFormedApiKey(token)) return unknown
      const hash = hashApiKey(token)
      const remembered = decisions.get(hash)
      if (remembered !== undefined) {
        noteUse(remembered)
        return remembered
      }
      const question = ask(hash)
      return { ...question, lookUp: () => question.lookUp().then(noteUse) }
    }

    return StoredKeys.of({
      check,
      identify: async (token) => {
        const checked = check(token)
        return checked.kind === "ask" ? checked.lookUp() : checked
      },
    })
  })

export const layer = (
  options: StoredKeysOptions = {},
): Layer.Layer<StoredKeys, never, ApiKeyStore> => Layer.scoped(StoredKeys, make(options))
