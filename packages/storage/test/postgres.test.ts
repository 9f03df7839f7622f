import assert from "node:assert/strict"
import { it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import { CategoryId, NewPet, PetRepository, type Pet } from "@petstore/core"
import { Array, Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { explainStorageFailure, parseStorageChoice, PostgresPetRepository } from "../src/index.js"
import { repositoryContract, withTemporaryPostgresDatabase } from "../src/testing/index.js"

/** The `_tag` of the error an exit failed with, if it failed with one. */
const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const runWith = <A, E>(
  layer: Layer.Layer<PetRepository, E>,
  effect: Effect.Effect<A, E, PetRepository>,
) => Effect.runPromise(Effect.provide(effect, layer))

/** Runs SQL on a database directly, beside the repository. */
const runSql = (url: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({ url: Redacted.make(url) }).pipe(
          Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
        ),
        (sql) => sql.unsafe(statement),
      ),
    ),
  )

/** Every pet after `afterId`, 100 at a time. */
const listAll = Effect.fn("listAll")(function* (afterId: Pet["id"]) {
  const repository = yield* PetRepository
  const seen: Array<Pet> = []
  let after = afterId
  for (;;) {
    const page = yield* repository.list({
      status: Option.none(),
      afterId: Option.some(after),
      limit: 100,
    })
    seen.push(...page)
    const last = Array.last(page)
    if (Option.isNone(last)) return seen
    after = last.value.id
  }
})

await withTemporaryPostgresDatabase("PostgreSQL", (database) => {
  const layer = PostgresPetRepository.layer({ url: database.url })

  repositoryContract("PostgreSQL", layer)

  it("two repositories on one database, as two processes, share one id sequence", async () => {
    const start = await runWith(
      layer,
      Effect.flatMap(PetRepository, (repository) => repository.create(newPet("marker"))),
    )
    const createMany = (prefix: string) =>
      Effect.flatMap(PetRepository, (repository) =>
        Effect.forEach(Array.range(1, 60), (i) => repository.create(newPet(`${prefix} ${i}`)), {
          concurrency: 8,
        }),
      )
    const [first, second] = await Promise.all([
      runWith(PostgresPetRepository.layer({ url: database.url }), createMany("first")),
      runWith(PostgresPetRepository.layer({ url: database.url }), createMany("second")),
    ])
    const created = [...first, ...second]
    assert.equal(new Set(created.map((pet) => pet.id)).size, 120)

    const listed = await runWith(layer, listAll(start.id))
    assert.deepEqual(
      listed.map((pet) => pet.id),
      created.map((pet) => pet.id).sort((a, b) => a - b),
    )
  })

  it("processes starting together on a fresh database migrate it once", async () => {
    const fresh = await database.createAnother()
    const open = () =>
      runWith(
        PostgresPetRepository.layer({ url: fresh.url }),
        Effect.flatMap(PetRepository, (repository) => repository.create(newPet("first"))),
      )
    const pets = await Promise.all(Array.makeBy(4, open))
    assert.equal(new Set(pets.map((pet) => pet.id)).size, 4)
  })

  it("never produces an id beyond 2^53 − 1", async () => {
    const fresh = await database.createAnother()
    const freshLayer = PostgresPetRepository.layer({ url: fresh.url })
    await runWith(freshLayer, Effect.void)
    await runSql(
      fresh.url,
      `ALTER TABLE pets ALTER COLUMN id RESTART WITH ${Number.MAX_SAFE_INTEGER}`,
    )
    const exits = await runWith(
      freshLayer,
      Effect.flatMap(PetRepository, (repository) =>
        Effect.all([
          Effect.exit(repository.create(newPet("last"))),
          Effect.exit(repository.create(newPet("one too many"))),
        ]),
      ),
    )
    const [last, tooMany] = exits
    assert.ok(Exit.isSuccess(last))
    assert.equal(last.value.id, Number.MAX_SAFE_INTEGER)
    assert.deepEqual(failureTag(tooMany), Option.some("StorageUnavailable"))
  })

  it("fails with StorageUnavailable during an outage and recovers after it", async () => {
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* PostgresPetRepository.make({ url: database.url })
          const before = yield* repository.create(newPet("before"))

          yield* Effect.promise(() => database.refuseConnections())
          const during = yield* Effect.exit(repository.create(newPet("during")))
          const read = yield* Effect.exit(repository.findById(before.id))
          yield* Effect.promise(() => database.allowConnections())

          assert.deepEqual(failureTag(during), Option.some("StorageUnavailable"))
          assert.deepEqual(failureTag(read), Option.some("StorageUnavailable"))
          const after = yield* repository.create(newPet("after"))
          assert.ok(after.id > before.id)
          assert.deepEqual(
            Option.map(yield* repository.findById(before.id), (pet) => pet.name),
            Option.some("before"),
          )
        }),
      ),
    )
  })

  it("refuses to open, with StorageUnavailable saying why, for a role that does not exist", async () => {
    const url = new URL(database.url)
    url.username = "no_such_role_petstore"
    url.password = "secret-password"
    const exit = await Effect.runPromiseExit(
      Effect.scoped(PostgresPetRepository.make({ url: url.toString() })),
    )
    assert.ok(Exit.isFailure(exit))
    const choice = parseStorageChoice(url.toString())
    assert.ok(choice._tag === "Right")
    const message = explainStorageFailure(choice.right, exit.cause)
    assert.match(message, /role "no_such_role_petstore" does not exist/)
    assert.doesNotMatch(message, /secret-password/)
  })
})

it("refuses to open an unreachable PostgreSQL with StorageUnavailable saying why", async () => {
  const url = "postgres://postgres@127.0.0.1:1/petstore"
  const exit = await Effect.runPromiseExit(Effect.scoped(PostgresPetRepository.make({ url })))
  assert.deepEqual(failureTag(exit), Option.some("StorageUnavailable"))
  assert.ok(Exit.isFailure(exit))
  const choice = parseStorageChoice(url)
  assert.ok(choice._tag === "Right")
  assert.match(explainStorageFailure(choice.right, exit.cause), /ECONNREFUSED 127\.0\.0\.1:1/)
})
