import {
  IdempotencyKeyReused,
  type CreatedPet,
  type IdempotencyClaim,
  type NewPet,
  type Pet,
} from "@petstore/core"
import { Effect, Either } from "effect"
import { claimId } from "../idempotency-retention.js"

/** One create of a group-commit batch: with a claim, a `createOnce`. */
export interface BatchItem {
  readonly pet: NewPet
  readonly claim?: IdempotencyClaim
}

/** A key stored before the batch, not expired, with the pet it created. */
export interface StoredClaim {
  readonly fingerprint: string
  readonly pet: Pet
}

/** What one item of a batch is answered. */
export type BatchAnswer = Either.Either<CreatedPet, IdempotencyKeyReused>

type Plan =
  /** The pet at `index` of `inserts`; `replayed` for an item repeating a key earlier in the batch. */
  | { readonly _tag: "Insert"; readonly index: number; readonly replayed: boolean }
  | { readonly _tag: "Replay"; readonly pet: Pet }
  | { readonly _tag: "Reused"; readonly error: IdempotencyKeyReused }

export interface BatchPlan {
  /** The pets to insert, in the order of the items that create them. */
  readonly inserts: ReadonlyArray<NewPet>
  /** The keys to store, each with the index in `inserts` of the pet it created. */
  readonly claims: ReadonlyArray<{ readonly claim: IdempotencyClaim; readonly index: number }>
  /** One per item, in the items' order. */
  readonly items: ReadonlyArray<Plan>
}

/**
 * Decides what each item of a batch does, given the keys already stored (by `claimId`). An item
 * whose key is stored replays its pet when the fingerprint is equal and fails with
 * `IdempotencyKeyReused` otherwise, without touching the other items. A key repeated within the
 * batch is treated as if the earlier item had already committed: the later one replays the pet
 * the earlier one creates, or fails with `IdempotencyKeyReused` for another pet. So the batch
 * creates at most one pet per key.
 */
export const planBatch = (
  items: ReadonlyArray<BatchItem>,
  stored: ReadonlyMap<string, StoredClaim>,
): BatchPlan => {
  const inserts: Array<NewPet> = []
  const claims: Array<{ claim: IdempotencyClaim; index: number }> = []
  const firstInBatch = new Map<string, { fingerprint: string; index: number }>()
  const plans = items.map(({ pet, claim }): Plan => {
    if (claim === undefined) {
      inserts.push(pet)
      return { _tag: "Insert", index: inserts.length - 1, replayed: false }
    }
    const id = claimId(claim)
    const earlier = stored.get(id)
    if (earlier !== undefined) {
      return earlier.fingerprint === claim.fingerprint
        ? { _tag: "Replay", pet: earlier.pet }
        : { _tag: "Reused", error: new IdempotencyKeyReused({ key: claim.key }) }
    }
    const first = firstInBatch.get(id)
    if (first !== undefined) {
      return first.fingerprint === claim.fingerprint
        ? { _tag: "Insert", index: first.index, replayed: true }
        : { _tag: "Reused", error: new IdempotencyKeyReused({ key: claim.key }) }
    }
    inserts.push(pet)
    const index = inserts.length - 1
    claims.push({ claim, index })
    firstInBatch.set(id, { fingerprint: claim.fingerprint, index })
    return { _tag: "Insert", index, replayed: false }
  })
  return { inserts, claims, items: plans }
}

/** Each item's answer, given the pets inserted for `plan.inserts`, in the same order. */
export const answerBatch = (
  plan: BatchPlan,
  inserted: ReadonlyArray<Pet>,
): Effect.Effect<ReadonlyArray<BatchAnswer>> =>
  Effect.suspend(() => {
    const answers: Array<BatchAnswer> = []
    for (const item of plan.items) {
      switch (item._tag) {
        case "Replay":
          answers.push(Either.right({ pet: item.pet, replayed: true }))
          break
        case "Reused":
          answers.push(Either.left(item.error))
          break
        case "Insert": {
          const pet = inserted[item.index]
          if (pet === undefined)
            return Effect.dieMessage(`no pet was inserted for item ${item.index} of the batch`)
          answers.push(Either.right({ pet, replayed: item.replayed }))
        }
      }
    }
    return Effect.succeed(answers)
  })
