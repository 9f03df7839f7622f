import assert from "node:assert/strict"
import { randomUUID } from "node:crypto"
import { describe, it } from "node:test"
import { Array, Cause, Duration, Effect, Exit, Layer, Option } from "effect"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  Limit,
  NewPet,
  petFingerprint,
  PetId,
  PetRepository,
  type IdempotencyClaim,
  type Pet,
  type PetStatus,
} from "@petstore/core"

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

/** Every pet of a slice, fetched `pageSize` at a time by following `afterId` while `hasMore`. */
const listAllPages = (start: PetId, status: Option.Option<PetStatus>, pageSize: number) =>
  Effect.gen(function* () {
    const repository = yield* PetRepository
    const seen: Array<Pet> = []
    let afterId = start
    for (;;) {
      const { pets, hasMore } = yield* repository.list({
        status,
        afterId: Option.some(afterId),
        limit: Limit.make(pageSize),
      })
      assert.ok(pets.length <= pageSize, `a page of ${pageSize} held ${pets.length} pets`)
      seen.push(...pets)
      const last = Array.last(pets)
      if (!hasMore) return seen
      assert.ok(Option.isSome(last), "hasMore on an empty page")
      afterId = last.value.id
    }
  })

/** A scope and key no other case or run uses, so the contract holds on a shared database. */
const freshIdempotency = () => ({
  scope: IdempotencyScope.make(`contract ${randomUUID()}`),
  key: IdempotencyKey.make(randomUUID()),
})

const claimFor = (
  pet: NewPet,
  idempotency: ReturnType<typeof freshIdempotency>,
): IdempotencyClaim => ({ ...idempotency, fingerprint: petFingerprint(pet) })

/** Every pet created after `start`, in id order. */
const createdAfter = (start: Pet) => listAllPages(start.id, Option.none(), 100)

/** The `_tag` of the error an exit failed with, if it failed with one. */
const failureTag = <A>(exit: Exit.Exit<A, { readonly _tag: string }>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

/** What the contract needs beyond the adapter's layer. */
export interface RepositoryContractOptions<E> {
  /**
   * The same adapter (on the same store or a fresh one) remembering idempotency keys for `ttl`
   * only; the expiry case builds it with a TTL of one second.
   */
  readonly withIdempotencyTtl: (ttl: Duration.Duration) => Layer.Layer<PetRepository, E>
}

/**
 * The behaviour every `PetRepository` adapter must have. Call it from a `node:test` file with
 * the adapter's layer, and a way to build it with a short idempotency TTL; each layer is built
 * afresh for each case and released after it. The cases only look at what they created, so
 * the store may already hold pets and keys.
 *
 * ```ts
 * repositoryContract("my adapter", MyPetRepository.layer(options), {
 *   withIdempotencyTtl: (ttl) => MyPetRepository.layer({ ...options, idempotencyTtl: ttl }),
 * })
 * ```
 */
export const repositoryContract = <E>(
  name: string,
  layer: Layer.Layer<PetRepository, E>,
  options: RepositoryContractOptions<E>,
) => {
  const run = <A, E2>(
    effect: Effect.Effect<A, E2, PetRepository>,
    provided: Layer.Layer<PetRepository, E> = layer,
  ) => Effect.runPromise(Effect.provide(effect, provided))

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
            limit: Limit.make(3),
          })
          assert.deepEqual(ids(page.pets), ids(created).slice(0, 3))
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
              limit: Limit.make(100),
            })
            assert.ok(page.pets.every((pet) => pet.status === status))
            assert.deepEqual(ids(page.pets), ids(created.filter((pet) => pet.status === status)))
          }
          const unfiltered = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(start.id),
            limit: Limit.make(100),
          })
          assert.deepEqual(ids(unfiltered.pets), ids(created))
        }),
      ))

    it("list after the last id is empty, with nothing more", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const last = yield* marker
          const page = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(last.id),
            limit: Limit.make(10),
          })
          assert.deepEqual(page, { pets: [], hasMore: false })
        }),
      ))

    it("list says hasMore while more pets of the slice follow", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const created = yield* createAll(Array.makeBy(7, (i) => newPet(`pet ${i}`)))
          const first = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(start.id),
            limit: Limit.make(3),
          })
          assert.deepEqual(ids(first.pets), ids(created).slice(0, 3))
          assert.equal(first.hasMore, true)
          const last = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(Option.getOrThrow(Array.get(created, 5)).id),
            limit: Limit.make(3),
          })
          assert.deepEqual(ids(last.pets), ids(created).slice(6))
          assert.equal(last.hasMore, false)
        }),
      ))

    it("an exactly full last page has hasMore false", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const created = yield* createAll(Array.makeBy(4, (i) => newPet(`pet ${i}`)))
          const page = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(start.id),
            limit: Limit.make(4),
          })
          assert.deepEqual(ids(page.pets), ids(created))
          assert.equal(page.hasMore, false)
          const single = yield* repository.list({
            status: Option.none(),
            afterId: Option.some(Option.getOrThrow(Array.get(created, 2)).id),
            limit: Limit.make(1),
          })
          assert.deepEqual(ids(single.pets), [Option.getOrThrow(Array.get(created, 3)).id])
          assert.equal(single.hasMore, false)
        }),
      ))

    it("hasMore counts only pets of the status asked for", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const created = yield* createAll([
            newPet("a", "sold"),
            newPet("b", "sold"),
            newPet("c", "available"),
            newPet("d"),
          ])
          const sold = yield* repository.list({
            status: Option.some("sold"),
            afterId: Option.some(start.id),
            limit: Limit.make(2),
          })
          assert.deepEqual(ids(sold.pets), ids(created).slice(0, 2))
          assert.equal(sold.hasMore, false)
          const oneSold = yield* repository.list({
            status: Option.some("sold"),
            afterId: Option.some(start.id),
            limit: Limit.make(1),
          })
          assert.deepEqual(ids(oneSold.pets), ids(created).slice(0, 1))
          assert.equal(oneSold.hasMore, true)
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

    it("createOnce creates the pet once: a retry with the same key and pet replays it and stores nothing new", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const sent = newPet("Rex", "pending", 7)
          const claim = claimFor(sent, freshIdempotency())
          const first = yield* repository.createOnce(sent, claim)
          assert.equal(first.replayed, false)
          assert.deepEqual(
            { ...first.pet, id: 0 },
            { id: 0, name: "Rex", categoryId: 7, status: "pending" },
          )

          const retry = yield* repository.createOnce(newPet("Rex", "pending", 7), claim)
          assert.equal(retry.replayed, true)
          assert.deepEqual({ ...retry.pet }, { ...first.pet })
          assert.deepEqual(ids(yield* createdAfter(start)), [first.pet.id])
        }),
      ))

    it("createOnce with a key already used for another pet fails with IdempotencyKeyReused and stores nothing", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const idempotency = freshIdempotency()
          const first = yield* repository.createOnce(
            newPet("Rex"),
            claimFor(newPet("Rex"), idempotency),
          )
          for (const other of [newPet("Max"), newPet("Rex", "sold"), newPet("Rex", undefined, 2)]) {
            const reused = yield* Effect.exit(
              repository.createOnce(other, claimFor(other, idempotency)),
            )
            assert.deepEqual(failureTag(reused), Option.some("IdempotencyKeyReused"))
          }
          assert.deepEqual(ids(yield* createdAfter(start)), [first.pet.id])
        }),
      ))

    it("the same key under two scopes is two keys: each creates its own pet and replays it", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const sent = newPet("Rex")
          const key = IdempotencyKey.make(randomUUID())
          const scopes = [`alice ${randomUUID()}`, `bob ${randomUUID()}`].map((scope) =>
            claimFor(sent, { scope: IdempotencyScope.make(scope), key }),
          )
          const created = yield* Effect.forEach(scopes, (claim) =>
            repository.createOnce(sent, claim),
          )
          assert.deepEqual(
            created.map((answer) => answer.replayed),
            [false, false],
          )
          const replayed = yield* Effect.forEach(scopes, (claim) =>
            repository.createOnce(sent, claim),
          )
          assert.deepEqual(
            replayed.map((answer) => answer.pet.id),
            created.map((answer) => answer.pet.id),
          )
          assert.deepEqual(
            ids(yield* createdAfter(start)),
            created.map((answer) => answer.pet.id),
          )
        }),
      ))

    it("concurrent createOnce calls with one key make exactly one pet; each answers it or fails with IdempotencyKeyInUse", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const sent = newPet("Rex")
          const claim = claimFor(sent, freshIdempotency())
          const exits = yield* Effect.forEach(
            Array.makeBy(20, () => claim),
            (same) => Effect.exit(repository.createOnce(sent, same)),
            { concurrency: "unbounded" },
          )
          const created = yield* createdAfter(start)
          assert.equal(created.length, 1, `${created.length} pets were created`)
          const [pet] = created
          const answers = Array.filterMap(exits, (exit) =>
            Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none(),
          )
          assert.ok(answers.every((answer) => answer.pet.id === pet?.id))
          assert.equal(answers.filter((answer) => !answer.replayed).length, 1)
          for (const exit of exits.filter(Exit.isFailure)) {
            assert.deepEqual(failureTag(exit), Option.some("IdempotencyKeyInUse"))
          }
          const retry = yield* repository.createOnce(sent, claim)
          assert.deepEqual(
            { replayed: retry.replayed, id: retry.pet.id },
            { replayed: true, id: pet?.id },
          )
        }),
      ))

    it("a key is forgotten after idempotencyTtl: the same key then creates a new pet, and replays that one", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const sent = newPet("Rex")
          const claim = claimFor(sent, freshIdempotency())
          const first = yield* repository.createOnce(sent, claim)
          assert.equal((yield* repository.createOnce(sent, claim)).replayed, true)

          yield* Effect.sleep("1200 millis")
          const second = yield* repository.createOnce(sent, claim)
          assert.equal(second.replayed, false)
          assert.ok(second.pet.id > first.pet.id)
          const retry = yield* repository.createOnce(sent, claim)
          assert.deepEqual(
            { replayed: retry.replayed, id: retry.pet.id },
            { replayed: true, id: second.pet.id },
          )
          assert.deepEqual(ids(yield* createdAfter(start)), [first.pet.id, second.pet.id])
        }),
        options.withIdempotencyTtl(Duration.seconds(1)),
      ))

    it("create without a key is unchanged: the same pet twice makes two pets, beside a createOnce of it", () =>
      run(
        Effect.gen(function* () {
          const repository = yield* PetRepository
          const start = yield* marker
          const sent = newPet("Rex")
          const once = yield* repository.createOnce(sent, claimFor(sent, freshIdempotency()))
          const first = yield* repository.create(sent)
          const second = yield* repository.create(sent)
          assert.deepEqual(ids(yield* createdAfter(start)), [once.pet.id, first.id, second.id])
        }),
      ))
  })
}
