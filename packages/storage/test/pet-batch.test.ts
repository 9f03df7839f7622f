import assert from "node:assert/strict"
import { describe, it } from "node:test"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  NewPet,
  Pet,
  PetId,
  petFingerprint,
  type IdempotencyClaim,
} from "@petstore/core"
import { Effect, Either } from "effect"
import { claimId } from "../src/idempotency-retention.js"
import { answerBatch, planBatch, type BatchItem, type StoredClaim } from "../src/sql/pet-batch.js"

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const claimFor = (pet: NewPet, key: string, scope = "principal"): IdempotencyClaim => ({
  scope: IdempotencyScope.make(scope),
  key: IdempotencyKey.make(key),
  fingerprint: petFingerprint(pet),
})

const keyed = (name: string, key: string, scope?: string): BatchItem => ({
  pet: newPet(name),
  claim: claimFor(newPet(name), key, scope),
})

/** What each item is answered when the batch's pets get ids from 100 up. */
const answers = (items: ReadonlyArray<BatchItem>, stored: ReadonlyMap<string, StoredClaim>) => {
  const plan = planBatch(items, stored)
  const inserted = plan.inserts.map(
    (pet, index) => new Pet({ ...pet, id: PetId.make(100 + index) }),
  )
  const answered = Effect.runSync(answerBatch(plan, inserted))
  return {
    inserted: plan.inserts.map((pet) => pet.name),
    keys: plan.claims.map(({ claim, index }) => [claim.key, index]),
    answers: answered.map((answer) =>
      Either.match(answer, {
        onLeft: (error) => error._tag,
        onRight: ({ pet, replayed }) => [pet.id, replayed],
      }),
    ),
  }
}

const storedRex = new Map([
  [
    claimId(claimFor(newPet("Rex"), "k-1")),
    {
      fingerprint: petFingerprint(newPet("Rex")),
      pet: new Pet({ ...newPet("Rex"), id: PetId.make(7) }),
    },
  ],
])

describe("planBatch", () => {
  it("inserts every create without a key, in order", () => {
    assert.deepEqual(answers([{ pet: newPet("a") }, { pet: newPet("a") }], new Map()), {
      inserted: ["a", "a"],
      keys: [],
      answers: [
        [100, false],
        [101, false],
      ],
    })
  })

  it("replays a stored key for the same pet and refuses it for another, inserting nothing for either", () => {
    assert.deepEqual(
      answers([keyed("Rex", "k-1"), keyed("Max", "k-1"), { pet: newPet("plain") }], storedRex),
      {
        inserted: ["plain"],
        keys: [],
        answers: [[7, true], "IdempotencyKeyReused", [100, false]],
      },
    )
  })

  it("a key repeated within the batch makes one pet: the same pet replays it, another is refused", () => {
    assert.deepEqual(
      answers(
        [keyed("Rex", "k-2"), { pet: newPet("plain") }, keyed("Rex", "k-2"), keyed("Max", "k-2")],
        new Map(),
      ),
      {
        inserted: ["Rex", "plain"],
        keys: [["k-2", 0]],
        answers: [[100, false], [101, false], [100, true], "IdempotencyKeyReused"],
      },
    )
  })

  it("the same key under another scope is another key", () => {
    assert.deepEqual(answers([keyed("Rex", "k-1", "a"), keyed("Rex", "k-1", "b")], new Map()), {
      inserted: ["Rex", "Rex"],
      keys: [
        ["k-1", 0],
        ["k-1", 1],
      ],
      answers: [
        [100, false],
        [101, false],
      ],
    })
  })
})
