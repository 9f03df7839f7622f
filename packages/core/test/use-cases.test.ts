import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Effect, Exit, Layer, Option, Schema } from "effect"
import {
  createPet,
  getPet,
  IdempotencyKey,
  IdempotencyKeyInUse,
  IdempotencyScope,
  Limit,
  listPets,
  NewPet,
  Pet,
  petFingerprint,
  PetId,
  PetRepository,
  type CategoryId,
  type IdempotencyClaim,
  type PetSlice,
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

/** The `_tag` of the error an exit failed with, if it failed with one. */
const failureTag = <A>(exit: Exit.Exit<A, { readonly _tag: string }>) =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : undefined

const idempotency = (key: string, scope = "principal-a") => ({
  scope: IdempotencyScope.make(scope),
  key: IdempotencyKey.make(key),
})

/** A repository that records what it is asked and answers `pet` to every create. */
const recordingRepository = (pet: Pet, replayed: boolean) => {
  const calls: Array<{ readonly method: string; readonly claim?: IdempotencyClaim }> = []
  const layer = Layer.succeed(
    PetRepository,
    PetRepository.of({
      create: () =>
        Effect.as(
          Effect.sync(() => calls.push({ method: "create" })),
          pet,
        ),
      createOnce: (_, claim) =>
        Effect.as(
          Effect.sync(() => calls.push({ method: "createOnce", claim })),
          {
            pet,
            replayed,
          },
        ),
      findById: () => Effect.die("not used"),
      list: () => Effect.die("not used"),
    }),
  )
  return { calls, layer }
}

const rex = NewPet.make({ name: "Rex", categoryId: 7 as CategoryId, status: "pending" })

describe("createPet", () => {
  it("returns the pet as sent plus the id the store assigned, not replayed", async () => {
    const { pet: created, replayed } = await run(createPet(rex), fakeRepository())
    assert.deepEqual({ ...created }, { id: 1, name: "Rex", categoryId: 7, status: "pending" })
    assert.equal(replayed, false)
  })

  it("without an idempotency key, calls create, and two identical creates make two pets", async () => {
    const { calls, layer } = recordingRepository(pet(1), false)
    await run(createPet(rex), layer)
    assert.deepEqual(calls, [{ method: "create" }])

    const [first, second] = await run(
      Effect.all([createPet(rex), createPet(rex)]),
      fakeRepository(),
    )
    assert.notEqual(first.pet.id, second.pet.id)
  })

  it("with an idempotency key, calls createOnce with its scope, key and the pet's fingerprint, and answers what it answers", async () => {
    const { calls, layer } = recordingRepository(pet(4), true)
    const answer = await run(createPet(rex, idempotency("k-1")), layer)
    assert.deepEqual(calls, [
      {
        method: "createOnce",
        claim: { scope: "principal-a", key: "k-1", fingerprint: petFingerprint(rex) },
      },
    ])
    assert.equal(answer.pet.id, 4)
    assert.equal(answer.replayed, true)
  })

  it("a retry with the same key replays the first pet; another pet with it fails with IdempotencyKeyReused", async () => {
    const [first, retry, other] = await run(
      Effect.all([
        createPet(rex, idempotency("k-1")),
        createPet(NewPet.make({ ...rex }), idempotency("k-1")),
        Effect.exit(createPet(NewPet.make({ ...rex, name: "Max" }), idempotency("k-1"))),
      ]),
      fakeRepository(),
    )
    assert.equal(first.replayed, false)
    assert.deepEqual(retry, { pet: first.pet, replayed: true })
    assert.equal(failureTag(other), "IdempotencyKeyReused")
  })

  it("states IdempotencyKeyInUse from the repository in its error channel", async () => {
    const busy = Layer.succeed(
      PetRepository,
      PetRepository.of({
        create: () => Effect.die("not used"),
        createOnce: (_, claim) => Effect.fail(new IdempotencyKeyInUse({ key: claim.key })),
        findById: () => Effect.die("not used"),
        list: () => Effect.die("not used"),
      }),
    )
    const exit = await Effect.runPromiseExit(
      Effect.provide(createPet(rex, idempotency("k-1")), busy),
    )
    assert.equal(failureTag(exit), "IdempotencyKeyInUse")
  })
})

describe("petFingerprint", () => {
  const decode = Schema.decodeUnknownSync(NewPet)

  it("is equal for two NewPets with the same fields, whatever their order or unknown properties", () => {
    const a = decode({ name: "Rex", categoryId: 7, status: "sold" })
    const b = decode(
      JSON.parse('{ "status": "sold", "extra": [1], "categoryId": 7, "name": "Rex" }'),
    )
    assert.equal(petFingerprint(a), petFingerprint(b))
    assert.equal(
      petFingerprint(decode({ name: "Rex", categoryId: 7 })),
      petFingerprint(decode({ categoryId: 7, name: "Rex", tags: [] })),
    )
  })

  it("differs when a field differs, and a missing status differs from each status", () => {
    const base = { name: "Rex", categoryId: 7 }
    const fingerprints = [
      decode(base),
      decode({ ...base, status: "available" }),
      decode({ ...base, status: "pending" }),
      decode({ ...base, status: "sold" }),
      decode({ ...base, name: "Rex " }),
      decode({ ...base, categoryId: 8 }),
      decode({ name: "null", categoryId: 7 }),
    ].map(petFingerprint)
    assert.equal(new Set(fingerprints).size, fingerprints.length)
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
    const page = await run(listPets({ limit: Limit.make(2) }), store)
    assert.deepEqual(
      page.pets.map((p) => p.id),
      [1, 2],
    )
    assert.deepEqual(page.next, Option.some(2))
  })

  it("continues after the cursor and has no next page at the end", async () => {
    const page = await run(listPets({ limit: Limit.make(2), cursor: PetId.make(2) }), store)
    assert.deepEqual(
      page.pets.map((p) => p.id),
      [3, 4],
    )
    assert.deepEqual(page.next, Option.none())
  })

  it("returns only pets with the requested status", async () => {
    const page = await run(listPets({ limit: Limit.make(20), status: "sold" }), store)
    assert.deepEqual(
      page.pets.map((p) => p.id),
      [1, 3],
    )
    assert.deepEqual(page.next, Option.none())
  })

  it("has no next page when the last page is exactly full", async () => {
    const page = await run(listPets({ limit: Limit.make(4) }), store)
    assert.equal(page.pets.length, 4)
    assert.deepEqual(page.next, Option.none())
  })

  it("passes the limit to the repository as it is and takes hasMore from it", async () => {
    const slices: Array<PetSlice> = []
    const recording = Layer.succeed(
      PetRepository,
      PetRepository.of({
        create: () => Effect.die("not used"),
        createOnce: () => Effect.die("not used"),
        findById: () => Effect.die("not used"),
        list: (slice) =>
          Effect.sync(() => {
            slices.push(slice)
            return { pets: [pet(5), pet(6)], hasMore: true }
          }),
      }),
    )
    const page = await run(listPets({ limit: Limit.make(2) }), recording)
    assert.deepEqual(
      slices.map((slice) => slice.limit),
      [2],
    )
    assert.deepEqual(page.next, Option.some(6))
  })
})
