import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Effect, Exit, Option, type Layer } from "effect"
import {
  createPet,
  getPet,
  listPets,
  NewPet,
  Pet,
  PetId,
  type CategoryId,
  type PetRepository,
  type PetStatus,
} from "../src/index.js"
import { fakeRepository } from "./fake-repository.js"

const pet = (id: number, status?: PetStatus) =>
  new Pet({
    id: PetId.make(id),
    name: `pet ${id}`,
    categoryId: 1 as CategoryId,
    ...(status ? { status } : {}),
  })

const run = <A, E>(effect: Effect.Effect<A, E, PetRepository>, layer: Layer.Layer<PetRepository>) =>
  Effect.runPromise(Effect.provide(effect, layer))

describe("createPet", () => {
  it("returns the pet as sent plus the id the store assigned", async () => {
    const sent = NewPet.make({ name: "Rex", categoryId: 7 as CategoryId, status: "pending" })
    const created = await run(createPet(sent), fakeRepository())
    assert.deepEqual({ ...created }, { id: 1, name: "Rex", categoryId: 7, status: "pending" })
  })
})

describe("getPet", () => {
  it("finds a stored pet", async () => {
    const found = await run(getPet(PetId.make(2)), fakeRepository([pet(1), pet(2)]))
    assert.equal(found.id, 2)
  })

  it("fails with PetNotFound naming the id", async () => {
    const exit = await Effect.runPromiseExit(
      Effect.provide(getPet(PetId.make(3)), fakeRepository([pet(1)])),
    )
    assert.ok(Exit.isFailure(exit))
    const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    assert.equal(failure?._tag, "PetNotFound")
    assert.equal(failure?.id, 3)
  })
})

describe("listPets", () => {
  const store = fakeRepository([pet(1, "sold"), pet(2), pet(3, "sold"), pet(4, "available")])

  it("returns at most limit pets and points to the next page when more remain", async () => {
    const page = await run(listPets({ limit: 2 }), store)
    assert.deepEqual(
      page.pets.map((p) => p.id),
      [1, 2],
    )
    assert.deepEqual(page.next, Option.some(2))
  })

  it("continues after the cursor and has no next page at the end", async () => {
    const page = await run(listPets({ limit: 2, cursor: PetId.make(2) }), store)
    assert.deepEqual(
      page.pets.map((p) => p.id),
      [3, 4],
    )
    assert.deepEqual(page.next, Option.none())
  })

  it("returns only pets with the requested status", async () => {
    const page = await run(listPets({ limit: 20, status: "sold" }), store)
    assert.deepEqual(
      page.pets.map((p) => p.id),
      [1, 3],
    )
    assert.deepEqual(page.next, Option.none())
  })
})
