import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Array, Effect, Layer, Option } from "effect"
import { CategoryId, NewPet, PetId, PetRepository, type Pet, type PetStatus } from "@petstore/core"

const newPet = (name: string, status?: PetStatus, categoryId = 1) =>
  NewPet.make({ name, categoryId: CategoryId.make(categoryId), ...(status ? { status } : {}) })

const ids = (pets: ReadonlyArray<Pet>) => pets.map((pet) => pet.id)

/** Creates the pets one after another and returns them in creation order. */
const createAll = (pets: ReadonlyArray<NewPet>) =>
  Effect.flatMap(PetRepository, (repository) => Effect.forEach(pets, repository.create))

/**
 * A pet created first, so a test can list only what it created after it: the contract holds
 * on a store that already has pets in it, such as a shared development database.
 */
const marker = Effect.flatMap(PetRepository, (repository) => repository.create(newPet("marker")))

/** Every pet of a slice, fetched `pageSize` at a time by following `afterId`. */
const listAllPages = (start: PetId, status: Option.Option<PetStatus>, pageSize: number) =>
  Effect.gen(function* () {
    const repository = yield* PetRepository
    const seen: Array<Pet> = []
    let afterId = start
    for (;;) {
      const page = yield* repository.list({
        status,
        afterId: Option.some(afterId),
        limit: pageSize,
      })
      seen.push(...page)
      const last = Array.last(page)
      if (Option.isNone(last) || page.length < pageSize) return seen
      afterId = last.value.id
    }
  })

/**
 * The behaviour every `PetRepository` adapter must have. Call it from a `node:test` file with
 * the adapter's layer; the layer is built afresh for each case and released after it.
 *
 * ```ts
 * repositoryContract("my adapter", MyPetRepository.layer(options))
 * ```
 */
export const repositoryContract = <E>(name: string, layer: Layer.Layer<PetRepository, E>) => {
  const run = <A, E2>(effect: Effect.Effect<A, E2, PetRepository>) =>
    Effect.runPromise(Effect.provide(effect, layer))

  describe(`PetRepository contract: ${name}`, () => {
    it("create returns the fields sent plus a positive integer id", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const withStatus = yield* repository.create(newPet("Rex", "pending", 7))
          assert.deepEqual(
            { ...withStatus, id: 0 },
            { id: 0, name: "Rex", categoryId: 7, status: "pending" },
          )
          assert.ok(Number.isSafeInteger(withStatus.id) && withStatus.id > 0)

          const withoutStatus = yield* repository.create(newPet("Tom"))
          assert.deepEqual({ ...withoutStatus, id: 0 }, { id: 0, name: "Tom", categoryId: 1 })
          assert.equal("status" in withoutStatus, false)
        }),
      ))

    it("create assigns ids that are unique and increase in creation order", () =>
      run(
        Effect.gen(function* () {
          const created = yield* createAll(Array.makeBy(20, (i) => newPet(`pet ${i}`)))
          const assigned = ids(created)
          assert.deepEqual(
            assigned,
            [...assigned].sort((a, b) => a - b),
          )
          assert.equal(new Set(assigned).size, assigned.length)
        }),
      ))

    it("keeps names and category ids exactly, at the edges of their ranges", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const edges = [
            newPet("x".repeat(255), "sold", Number.MAX_SAFE_INTEGER),
            newPet("🐕".repeat(255), "pending", 42),
            newPet(
              "Ünïcödé 🐕 名前 'quoted' \"double\" ; DROP TABLE pets",
              "available",
              Number.MIN_SAFE_INTEGER,
            ),
            newPet(" ", undefined, 0),
          ]
          for (const sent of edges) {
            const created = yield* repository.create(sent)
            const found = yield* repository.findById(created.id)
            assert.deepEqual(
              Option.map(found, (pet) => ({ ...pet })),
              Option.some({ ...created }),
            )
            assert.equal(created.name, sent.name)
            assert.equal(created.categoryId, sent.categoryId)
          }
        }),
      ))

    it("findById returns the stored pet, and none for an id never assigned", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const created = yield* repository.create(newPet("Bella", "available"))
          const found = yield* repository.findById(created.id)
          assert.deepEqual(
            Option.map(found, (pet) => ({ ...pet })),
            Option.some({ ...created }),
          )

          const missing = yield* repository.findById(PetId.make(Number.MAX_SAFE_INTEGER))
          assert.ok(Option.isNone(missing))
        }),
      ))

    it("list returns pets in ascending id order, at most limit of them", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const created = yield* createAll(Array.makeBy(5, (i) => newPet(`pet ${i}`)))
          const page = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(start.id),
            limit: 3,
          })
          assert.deepEqual(ids(page), ids(created).slice(0, 3))
        }),
      ))

    it("list with a status returns only pets with that status", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const created = yield* createAll([
            newPet("a", "sold"),
            newPet("b", "available"),
            newPet("c"),
            newPet("d", "sold"),
            newPet("e", "pending"),
          ])
          for (const status of ["available", "pending", "sold"] as const) {
            const page = yield* repository.list({
              status: Option.some(status),
              afterId: Option.some(start.id),
              limit: 100,
            })
            assert.ok(page.every((pet) => pet.status === status))
            assert.deepEqual(ids(page), ids(created.filter((pet) => pet.status === status)))
          }
          const unfiltered = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(start.id),
            limit: 100,
          })
          assert.deepEqual(ids(unfiltered), ids(created))
        }),
      ))

    it("list after the last id is empty", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const last = yield* marker
          const page = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(last.id),
            limit: 10,
          })
          assert.deepEqual(page, [])
        }),
      ))

    it("following afterId visits every matching pet exactly once", () =>
      run(
        Effect.gen(function* () {
          const start = yield* marker
          const statuses = [undefined, "available", "pending", "sold"] as const
          const created = yield* createAll(
            Array.makeBy(47, (i) => newPet(`pet ${i}`, statuses[i % statuses.length])),
          )
          const everything = yield* listAllPages(start.id, Option.none(), 7)
          assert.deepEqual(ids(everything), ids(created))
          const sold = yield* listAllPages(start.id, Option.some("sold"), 4)
          assert.deepEqual(ids(sold), ids(created.filter((pet) => pet.status === "sold")))
        }),
      ))

    it("concurrent creates each get their own id and are all kept", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const created = yield* Effect.forEach(
            Array.makeBy(200, (i) => newPet(`concurrent ${i}`, i % 2 ? "sold" : undefined)),
            repository.create,
            { concurrency: "unbounded" },
          )
          assert.equal(new Set(ids(created)).size, 200)
          const listed = yield* listAllPages(start.id, Option.none(), 100)
          assert.deepEqual(new Set(ids(listed)), new Set(ids(created)))
          for (const pet of created) {
            const found = yield* repository.findById(pet.id)
            assert.equal(Option.getOrThrow(found).name, pet.name)
          }
        }),
      ))
  })
}
