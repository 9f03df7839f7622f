import assert from "node:assert/strict"
import { describe, it } from "node:test"
import {
  CategoryId,
  createPet,
  getPet,
  Limit,
  listPets,
  NewPet,
  PetId,
  type Pet,
  type PetRepository,
  type PetStatus,
} from "@petstore/core"
import { Array, Effect, Either, Option } from "effect"
import { MemoryPetRepository } from "../src/index.js"

const run = <A, E>(effect: Effect.Effect<A, E, PetRepository>) =>
  Effect.runPromise(Effect.provide(effect, MemoryPetRepository.layer))

const newPet = (name: string, status?: PetStatus) =>
  NewPet.make({ name, categoryId: CategoryId.make(1), ...(status ? { status } : {}) })

/** Every pet `listPets` hands out, page after page, following `next`. */
const everyPage = (limit: number, status?: PetStatus) =>
  Effect.gen(function* () {
    const seen: Array<Pet> = []
    let cursor: Option.Option<PetId> = Option.none()
    for (;;) {
      const page = yield* listPets({
        limit: Limit.make(limit),
        ...(status ? { status } : {}),
        ...(Option.isSome(cursor) ? { cursor: cursor.value } : {}),
      })
      assert.ok(page.pets.length <= limit)
      seen.push(...page.pets)
      if (Option.isNone(page.next)) return seen
      cursor = page.next
    }
  })

describe("the use cases on the in-memory adapter", () => {
  it("createPet, then getPet finds it and listPets lists it", () =>
    run(
      Effect.gen(function* () {
        const { pet: created } = yield* createPet(newPet("Rex", "sold"))
        assert.deepEqual({ ...(yield* getPet(created.id)) }, { ...created })
        const page = yield* listPets({ limit: Limit.make(20), status: "sold" })
        assert.deepEqual(
          page.pets.map((pet) => pet.id),
          [created.id],
        )
      }),
    ))

  it("getPet of an id never assigned fails with PetNotFound", () =>
    run(
      Effect.gen(function* () {
        const result = yield* Effect.either(getPet(PetId.make(7)))
        assert.ok(Either.isLeft(result))
        assert.equal(result.left._tag, "PetNotFound")
      }),
    ))

  it("following next pages visits every pet exactly once, with and without a status", () =>
    run(
      Effect.gen(function* () {
        const statuses = [undefined, "available", "pending", "sold"] as const
        const created = yield* Effect.forEach(Array.range(0, 102), (i) =>
          Effect.map(
            createPet(newPet(`pet ${i}`, statuses[i % statuses.length])),
            ({ pet }) => pet,
          ),
        )
        const ids = (pets: ReadonlyArray<Pet>) => pets.map((pet) => pet.id)
        assert.deepEqual(ids(yield* everyPage(10)), ids(created))
        assert.deepEqual(ids(yield* everyPage(100)), ids(created))
        assert.deepEqual(
          ids(yield* everyPage(7, "pending")),
          ids(created.filter((pet) => pet.status === "pending")),
        )
        const lastHundred = Option.getOrThrow(Array.get(created, 2))
        const exact = yield* listPets({ limit: Limit.make(100), cursor: lastHundred.id })
        assert.equal(exact.pets.length, 100)
        assert.ok(Option.isNone(exact.next), "no next page when the last page is exactly full")
      }),
    ))
})
