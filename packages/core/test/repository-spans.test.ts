import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Cause, Context, Effect, Layer, Option, type Exit } from "effect"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  Limit,
  NewPet,
  Pet,
  petFingerprint,
  PetId,
  PetRepository,
  StorageUnavailable,
  tracedPetRepositoryLayer,
  tracePetRepository,
} from "../src/index.js"
import { type RecordedSpan, recordingTracer } from "../src/testing/index.js"
import { fakeRepository } from "./fake-repository.js"

// Values a client chooses, distinctive enough to be found wherever they leak.
const seeded = [7001, 7002, 7003].map(
  (id) =>
    new Pet({
      id: PetId.make(id),
      name: `Rex-${id}-3f9a`,
      categoryId: CategoryId.make(9091),
      status: "available",
    }),
)
const newPet = NewPet.make({ name: "Bella-77c1", categoryId: CategoryId.make(9092) })
const otherPet = NewPet.make({ name: "Milo-5e0d", categoryId: CategoryId.make(9093) })
const claim = (pet: NewPet) => ({
  scope: IdempotencyScope.make("scope-c0de"),
  key: IdempotencyKey.make("idem-key-91b7"),
  fingerprint: petFingerprint(pet),
})
const clientValues = [
  "7001",
  "7002",
  "7003",
  "3f9a",
  "Bella-77c1",
  "Milo-5e0d",
  "9091",
  "9092",
  "9093",
  "scope-c0de",
  "idem-key-91b7",
]

/** Runs `program` under a `request` span, with the traced fake repository over `seeded`. */
const traced = <A, E>(program: Effect.Effect<A, E, PetRepository>) => {
  const { spans, tracer } = recordingTracer()
  const run = program.pipe(
    Effect.withSpan("request"),
    Effect.provide(Layer.provide(tracedPetRepositoryLayer, fakeRepository(seeded))),
    Effect.withTracer(tracer),
    Effect.exit,
  )
  return Effect.runPromise(Effect.map(run, (exit) => ({ exit, spans })))
}

const named = (spans: ReadonlyArray<RecordedSpan>, name: string) => {
  const found = spans.filter((span) => span.name === name)
  assert.equal(found.length, 1, `${found.length} spans named ${name}`)
  return found[0]!
}

const everyCall = Effect.gen(function* () {
  const repository = yield* PetRepository
  yield* repository.create(newPet)
  yield* repository.createOnce(newPet, claim(newPet))
  yield* repository.createOnce(newPet, claim(newPet))
  yield* repository.findById(PetId.make(7002))
  yield* repository.list({
    status: Option.some("available"),
    afterId: Option.some(PetId.make(7001)),
    limit: Limit.make(1),
  })
  // The same key for another pet: a failure that names the key.
  return yield* repository.createOnce(otherPet, claim(otherPet))
})

describe("repository spans", () => {
  it("puts each method in a span named after it, of kind internal, under the caller's span", async () => {
    const { spans } = await traced(everyCall)
    const request = named(spans, "request")
    const methods = spans.filter((span) => span !== request)
    assert.deepEqual(
      methods.map((span) => span.name),
      [
        "PetRepository.create",
        "PetRepository.createOnce",
        "PetRepository.createOnce",
        "PetRepository.findById",
        "PetRepository.list",
        "PetRepository.createOnce",
      ],
    )
    for (const span of methods) {
      assert.equal(span.kind, "internal")
      assert.deepEqual(span.parent, Option.some(request))
      assert.equal(span.status._tag, "Ended", `${span.name} was not ended`)
    }
  })

  it("describes the call and its outcome", async () => {
    const { spans } = await traced(everyCall)
    const [created, replayed, refused] = spans.filter(
      (span) => span.name === "PetRepository.createOnce",
    )
    assert.equal(created?.attributes.get("petstore.idempotency.replayed"), false)
    assert.equal(replayed?.attributes.get("petstore.idempotency.replayed"), true)
    assert.equal(refused?.attributes.has("petstore.idempotency.replayed"), false)
    assert.equal(named(spans, "PetRepository.findById").attributes.get("petstore.pet.found"), true)
    assert.deepEqual(Object.fromEntries(named(spans, "PetRepository.list").attributes), {
      "petstore.list.limit": 1,
      "petstore.list.status_filtered": true,
      "petstore.list.after_cursor": true,
      "petstore.list.returned": 1,
      "petstore.list.has_more": true,
    })
  })

  it("never names an id, a pet's name or category, or an idempotency key or scope", async () => {
    const { exit, spans } = await traced(everyCall)
    // The last create failed with IdempotencyKeyReused, whose key the caller still receives (and
    // the test's own `request` span, ended by Effect with that failure, shows).
    assert.ok(exit._tag === "Failure")
    assert.ok(Cause.pretty(exit.cause).includes("idem-key-91b7"))
    const methods = spans.filter((span) => span.name !== "request")
    assert.equal(methods.length, 6)
    for (const span of methods) {
      const told = [
        span.name,
        ...span.attributes.keys(),
        ...[...span.attributes.values()].map((value) => String(value)),
        span.status._tag === "Ended" ? Cause.pretty(causeOf(span.status.exit)) : "",
      ].join("\n")
      for (const value of clientValues)
        assert.ok(!told.includes(value), `${span.name} carries the client's ${value}:\n${told}`)
    }
  })

  it("tells the span a failure's tag, and StorageUnavailable with its cause", async () => {
    const { spans } = await traced(everyCall)
    const refused = spans.filter((span) => span.name === "PetRepository.createOnce")[2]
    assert.ok(refused?.status._tag === "Ended")
    assert.match(Cause.pretty(causeOf(refused.status.exit)), /IdempotencyKeyReused/)

    const { spans: failed, tracer } = recordingTracer()
    const unavailable = new StorageUnavailable({ cause: new Error("disk unplugged") })
    const broken = Layer.succeed(
      PetRepository,
      PetRepository.of({
        create: () => Effect.fail(unavailable),
        createOnce: () => Effect.fail(unavailable),
        findById: () => Effect.fail(unavailable),
        list: () => Effect.fail(unavailable),
      }),
    )
    await Effect.runPromise(
      Effect.flatMap(PetRepository, (repository) => Effect.exit(repository.create(newPet))).pipe(
        Effect.provide(Layer.provide(tracedPetRepositoryLayer, broken)),
        Effect.withTracer(tracer),
      ),
    )
    const create = named(failed, "PetRepository.create")
    assert.ok(create.status._tag === "Ended")
    const told = Option.getOrNull(Cause.failureOption(causeOf(create.status.exit)))
    assert.ok(told instanceof StorageUnavailable)
    assert.equal(told.cause, unavailable.cause)
  })

  it("wraps whatever repository the layer is given, its own spans beneath the method's", async () => {
    const { spans, tracer } = recordingTracer()
    const inner = Layer.map(fakeRepository(seeded), (context) => {
      const repository = Context.get(context, PetRepository)
      return Context.make(
        PetRepository,
        PetRepository.of({
          ...repository,
          findById: (id) => Effect.withSpan(repository.findById(id), "sql.execute"),
        }),
      )
    })
    await Effect.runPromise(
      Effect.flatMap(PetRepository, (repository) => repository.findById(PetId.make(7003))).pipe(
        Effect.provide(Layer.provide(tracedPetRepositoryLayer, inner)),
        Effect.withTracer(tracer),
      ),
    )
    const method = named(spans, "PetRepository.findById")
    assert.deepEqual(named(spans, "sql.execute").parent, Option.some(method))
  })

  it("tracePetRepository decorates a repository value", async () => {
    const { spans, tracer } = recordingTracer()
    const pets = await Effect.runPromise(
      Effect.flatMap(PetRepository, (repository) =>
        tracePetRepository(repository).list({
          status: Option.none(),
          afterId: Option.none(),
          limit: Limit.make(20),
        }),
      ).pipe(Effect.provide(fakeRepository(seeded)), Effect.withTracer(tracer)),
    )
    assert.equal(pets.pets.length, 3)
    assert.deepEqual(Object.fromEntries(named(spans, "PetRepository.list").attributes), {
      "petstore.list.limit": 20,
      "petstore.list.status_filtered": false,
      "petstore.list.after_cursor": false,
      "petstore.list.returned": 3,
      "petstore.list.has_more": false,
    })
  })
})

const causeOf = (exit: Exit.Exit<unknown, unknown>) =>
  exit._tag === "Failure" ? exit.cause : Cause.empty
