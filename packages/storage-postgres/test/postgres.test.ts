import assert from "node:assert/strict"
import { it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import { CategoryId, Limit, NewPet, PetRepository, type Pet } from "@petstore/core"
import {
  Array,
  Cause,
  Deferred,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  Redacted,
  Schema,
  Scope,
} from "effect"
import { storageFailureReasons } from "@petstore/storage"
import { repositoryContract } from "@petstore/storage/testing"
import { PostgresPetRepository } from "../src/index.js"
import { withTemporaryPostgresDatabase } from "../src/testing/index.js"
import { driverCode } from "@petstore/storage/sql"

/** The `_tag` of the error an exit failed with, if it failed with one. */
const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

const interruptedOnly = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const runWith = <A, E>(
  layer: Layer.Layer<PetRepository, E>,
  effect: Effect.Effect<A, E, PetRepository>,
) => Effect.runPromise(Effect.provide(effect, layer))

/** A connection of the test's own to a database, beside the repository, closed with the scope. */
const ownConnection = (url: string) =>
  PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(
    Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
  )

/**
 * Runs `statements` in a transaction on `sql` and holds it open until the returned `release`
 * runs; resolves once the statements have run, with what the last one returned.
 */
const holdTransaction = (sql: PgClient.PgClient, statements: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const done = yield* Deferred.make<ReadonlyArray<unknown>>()
    const release = yield* Deferred.make<void>()
    const holder = yield* Effect.fork(
      sql.withTransaction(
        Effect.gen(function* () {
          let last: ReadonlyArray<unknown> = []
          for (const statement of statements) last = yield* sql.unsafe(statement)
          yield* Deferred.succeed(done, last)
          yield* Deferred.await(release)
        }),
      ),
    )
    const rows = yield* Deferred.await(done)
    return {
      rows,
      release: Effect.zipRight(Deferred.succeed(release, undefined), Fiber.join(holder)),
    }
  })

const everything = (afterId: Pet["id"]) => ({
  status: Option.none(),
  afterId: Option.some(afterId),
  limit: Limit.make(100),
})

const ids = (pets: ReadonlyArray<Pet>) => pets.map((pet) => pet.id)

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
    const page = yield* repository.list(everything(after))
    seen.push(...page.pets)
    const last = Array.last(page.pets)
    if (!page.hasMore || Option.isNone(last)) return seen
    after = last.value.id
  }
})

await withTemporaryPostgresDatabase("PostgreSQL", (database) => {
  const layer = PostgresPetRepository.layer({ url: database.url })

  repositoryContract("PostgreSQL", layer, {
    withIdempotencyTtl: (ttl) =>
      PostgresPetRepository.layer({ url: database.url, idempotencyTtl: ttl }),
  })

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

  it("a process starting while another migrates waits for it longer than lock_timeout and statement_timeout, then starts", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const fresh = yield* Effect.promise(() => database.createAnother())
          const migrating = yield* holdTransaction(yield* ownConnection(fresh.url), [
            "SELECT pg_advisory_xact_lock(hashtext('petstore_migrations'))",
          ])
          const released = yield* Effect.fork(Effect.delay(migrating.release, "6 seconds"))
          const started = Date.now()
          const repository = yield* PostgresPetRepository.make({ url: fresh.url })
          const waited = Date.now() - started
          yield* Fiber.join(released)
          const pet = yield* repository.create(newPet("after the wait"))
          assert.equal(pet.name, "after the wait")
          assert.ok(waited >= 5_000, `it started after ${waited} ms, before the lock was released`)
        }),
      ),
    ))

  it("never produces an id beyond 2^53 − 1: the exhausted sequence is a defect, not StorageUnavailable", async () => {
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
    assert.ok(Exit.isFailure(tooMany))
    assert.ok(Option.isNone(Cause.failureOption(tooMany.cause)), "a retry cannot help")
    const defect = Option.getOrThrow(Cause.dieOption(tooMany.cause))
    assert.ok(defect instanceof SqlError)
    assert.equal(driverCode(defect), "2200H") // sequence_generator_limit_exceeded
  })

  it("a create waiting for a table lock fails with StorageUnavailable after lock_timeout (2 s), and succeeds once the lock is gone", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* PostgresPetRepository.make({ url: database.url })
          const lock = yield* holdTransaction(yield* ownConnection(database.url), [
            "LOCK TABLE pets IN ACCESS EXCLUSIVE MODE",
          ])
          const started = Date.now()
          const refused = yield* Effect.exit(repository.create(newPet("while locked")))
          const waited = Date.now() - started
          yield* lock.release

          assert.deepEqual(failureTag(refused), Option.some("StorageUnavailable"))
          assert.ok(Exit.isFailure(refused))
          const failure = Option.getOrThrow(Cause.failureOption(refused.cause))
          assert.equal(driverCode(failure.cause), "55P03") // lock_not_available
          assert.ok(waited >= 1500 && waited < 4000, `the create waited ${waited} ms`)
          const after = yield* repository.create(newPet("after the lock"))
          assert.equal(after.name, "after the lock")
        }),
      ),
    ))

  it("lockTimeout overrides the default, for reads too", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* PostgresPetRepository.make({
            url: database.url,
            lockTimeout: "200 millis",
          })
          const start = yield* repository.create(newPet("marker"))
          const lock = yield* holdTransaction(yield* ownConnection(database.url), [
            "LOCK TABLE pets IN ACCESS EXCLUSIVE MODE",
          ])
          const started = Date.now()
          const refused = yield* Effect.exit(repository.list(everything(start.id)))
          const waited = Date.now() - started
          yield* lock.release
          assert.deepEqual(failureTag(refused), Option.some("StorageUnavailable"))
          assert.ok(waited < 1500, `the list waited ${waited} ms`)
        }),
      ),
    ))

  it("an interrupted create or list ends as an interruption, never as StorageUnavailable", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* PostgresPetRepository.make({ url: database.url })
          const start = yield* repository.create(newPet("marker"))
          const lock = yield* holdTransaction(yield* ownConnection(database.url), [
            "LOCK TABLE pets IN ACCESS EXCLUSIVE MODE",
          ])
          const creating = yield* Effect.fork(repository.create(newPet("interrupted")))
          const listing = yield* Effect.fork(repository.list(everything(start.id)))
          yield* Effect.sleep("300 millis")
          const created = yield* Fiber.interrupt(creating)
          const listed = yield* Fiber.interrupt(listing)
          yield* lock.release
          assert.ok(interruptedOnly(created), `the create ended with ${String(created)}`)
          assert.ok(interruptedOnly(listed), `the list ended with ${String(listed)}`)
          const after = yield* repository.create(newPet("after"))
          assert.ok(after.id > start.id)
        }),
      ),
    ))

  it("creates still waiting when the repository closes end as interruptions, never as StorageUnavailable", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          const repository = yield* Scope.extend(
            PostgresPetRepository.make({ url: database.url, groupCommit: { maxBatchSize: 1 } }),
            scope,
          )
          const lock = yield* holdTransaction(yield* ownConnection(database.url), [
            "LOCK TABLE pets IN ACCESS EXCLUSIVE MODE",
          ])
          const inFlight = yield* Effect.fork(repository.create(newPet("in flight")))
          yield* Effect.sleep("100 millis")
          const waiting = yield* Effect.forEach(Array.range(1, 3), (i) =>
            Effect.fork(repository.create(newPet(`waiting ${i}`))),
          )
          yield* Effect.sleep("50 millis")
          const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
          yield* Effect.sleep("50 millis")
          yield* lock.release
          yield* Fiber.join(closing)

          const committed = yield* Effect.timeout(Fiber.await(inFlight), "3 seconds")
          assert.ok(
            Exit.isSuccess(committed),
            `the batch in flight ended with ${String(committed)}`,
          )
          for (const caller of waiting) {
            const exit = yield* Effect.timeout(Fiber.await(caller), "3 seconds")
            assert.ok(interruptedOnly(exit), `a waiting create ended with ${String(exit)}`)
          }
        }),
      ),
    ))

  it("a batch's LOCK TABLE makes ids visible in increasing order across processes, and blocks no reader", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const reader = yield* PostgresPetRepository.make({ url: database.url })
          const otherProcess = yield* PostgresPetRepository.make({ url: database.url })
          const start = yield* reader.create(newPet("marker"))

          // Another session's insert, held open between the insert and its commit, as a batch of
          // a third process is for a moment. Its id is lower than any assigned after it.
          const batch = yield* holdTransaction(yield* ownConnection(database.url), [
            "INSERT INTO pets (name, category_id) VALUES ('held', 1) RETURNING id",
          ])
          const [{ id: heldId }] = Schema.decodeUnknownSync(
            Schema.Tuple(Schema.Struct({ id: Schema.NumberFromString })),
          )(batch.rows)
          const later = yield* Effect.fork(otherProcess.create(newPet("later")))
          yield* Effect.sleep("300 millis")

          // A reader is not blocked, and sees no pet beyond the one not yet committed ...
          const during = yield* Effect.timeout(reader.list(everything(start.id)), "1 second")
          assert.deepEqual(ids(during.pets), [])
          // ... because the other process's insert waits for that commit.
          assert.ok(Option.isNone(yield* Fiber.poll(later)), "the later create did not wait")

          yield* batch.release
          const created = yield* Fiber.join(later)
          assert.ok(created.id > heldId)
          // A client following cursors, continuing after the last pet it saw, skips nothing.
          const cursor = Option.getOrElse(
            Option.map(Array.last(during.pets), (pet) => pet.id),
            () => start.id,
          )
          const next = yield* reader.list(everything(cursor))
          assert.deepEqual(ids(next.pets), [heldId, created.id])
        }),
      ),
    ))

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
    const message = storageFailureReasons(exit.cause).join(": ")
    assert.match(message, /role "no_such_role_petstore" does not exist/)
    assert.doesNotMatch(message, /secret-password/)
  })
})

it("refuses to open an unreachable PostgreSQL with StorageUnavailable saying why", async () => {
  const url = "postgres://postgres@127.0.0.1:1/petstore"
  const exit = await Effect.runPromiseExit(Effect.scoped(PostgresPetRepository.make({ url })))
  assert.deepEqual(failureTag(exit), Option.some("StorageUnavailable"))
  assert.ok(Exit.isFailure(exit))
  assert.match(storageFailureReasons(exit.cause).join(": "), /ECONNREFUSED 127\.0\.0\.1:1/)
})

it("refuses to open a PostgreSQL URL whose %-escapes do not decode, without a stack trace or the password", async () => {
  const url = "postgres://app:pa%zz-s3cret@127.0.0.1:1/petstore"
  const exit = await Effect.runPromiseExit(Effect.scoped(PostgresPetRepository.make({ url })))
  assert.deepEqual(failureTag(exit), Option.some("StorageUnavailable"))
  assert.ok(Exit.isFailure(exit))
  const message = storageFailureReasons(exit.cause).join(": ")
  assert.match(message, /not a valid PostgreSQL URL/)
  assert.doesNotMatch(message, /s3cret|\n/)
})
