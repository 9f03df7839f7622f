import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  Limit,
  NewPet,
  petFingerprint,
  type IdempotencyClaim,
  type Pet,
  type PetRepository,
} from "@petstore/core"
import { Cause, Effect, Exit, Fiber, Option, Schedule, Schema } from "effect"
import { SqlitePetRepository } from "../src/index.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-sqlite-idempotency-"))
after(() => rmSync(directory, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(directory, `store-${++files}.db`)

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const claimFor = (pet: NewPet, key: string): IdempotencyClaim => ({
  scope: IdempotencyScope.make("principal"),
  key: IdempotencyKey.make(key),
  fingerprint: petFingerprint(pet),
})

const withRepository = <A, E>(
  options: SqlitePetRepository.SqlitePetRepositoryOptions,
  use: (repository: PetRepository["Type"]) => Effect.Effect<A, E>,
) => Effect.runPromise(Effect.scoped(Effect.flatMap(SqlitePetRepository.make(options), use)))

/** Runs SQL on the file directly, beside the repository. */
const runSql = (filename: string, statement: string) =>
  Effect.scoped(
    Effect.flatMap(
      SqliteClient.make({ filename }).pipe(
        Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      ),
      (sql) => sql.unsafe(statement),
    ),
  )

const storedKeys = (filename: string) =>
  runSql(filename, "SELECT idempotency_key FROM idempotency_keys ORDER BY idempotency_key").pipe(
    Effect.flatMap(
      Schema.decodeUnknown(Schema.Array(Schema.Struct({ idempotency_key: Schema.String }))),
    ),
    Effect.map((rows) => rows.map((row) => row.idempotency_key)),
  )

const everyPet = (repository: PetRepository["Type"]) =>
  Effect.map(
    repository.list({ status: Option.none(), afterId: Option.none(), limit: Limit.make(100) }),
    (page) => page.pets.map((pet: Pet) => ({ ...pet })),
  )

const failureTag = <A>(exit: Exit.Exit<A, { readonly _tag: string }>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

// Holding each batch open this long lets a test put several creates in one batch.
const slowBatches = { groupCommit: { window: "300 millis" } } as const

describe("SQLite file: idempotency keys", () => {
  it("a key outlives closing and reopening the file: the retry replays the same pet", async () => {
    const filename = freshFile()
    const sent = newPet("Rex")
    const first = await withRepository({ filename }, (repository) =>
      repository.createOnce(sent, claimFor(sent, "k-1")),
    )
    const [retry, pets] = await withRepository({ filename }, (repository) =>
      Effect.all([
        repository.createOnce(newPet("Rex"), claimFor(sent, "k-1")),
        everyPet(repository),
      ]),
    )
    assert.deepEqual({ ...retry, pet: { ...retry.pet } }, { pet: { ...first.pet }, replayed: true })
    assert.deepEqual(pets, [{ ...first.pet }])
  })

  it("purges expired keys in the background, keeping live keys and every pet", async () => {
    const filename = freshFile()
    await withRepository(
      { filename, idempotencyTtl: "500 millis", idempotencyPurgeInterval: "50 millis" },
      (repository) =>
        Effect.gen(function* () {
          const old = yield* repository.createOnce(newPet("old"), claimFor(newPet("old"), "k-old"))
          assert.deepEqual(yield* storedKeys(filename), ["k-old"])
          yield* Effect.repeat(storedKeys(filename), {
            until: (keys) => keys.length === 0,
            schedule: Schedule.spaced("50 millis"),
          }).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "never purged" }))

          yield* repository.createOnce(newPet("new"), claimFor(newPet("new"), "k-new"))
          yield* Effect.sleep("200 millis")
          assert.deepEqual(yield* storedKeys(filename), ["k-new"])
          assert.deepEqual(
            (yield* everyPet(repository)).map((pet) => pet.name),
            [old.pet.name, "new"],
          )
        }),
    )
  })

  it("while a create with a key waits for its batch, another with that key fails at once with IdempotencyKeyInUse", async () => {
    const filename = freshFile()
    const sent = newPet("Rex")
    await withRepository({ filename, ...slowBatches }, (repository) =>
      Effect.gen(function* () {
        const first = yield* Effect.fork(repository.createOnce(sent, claimFor(sent, "k-1")))
        yield* Effect.sleep("50 millis")
        const started = Date.now()
        const second = yield* Effect.exit(repository.createOnce(sent, claimFor(sent, "k-1")))
        assert.ok(Date.now() - started < 100, "the second create waited")
        assert.deepEqual(failureTag(second), Option.some("IdempotencyKeyInUse"))

        const created = yield* Fiber.join(first)
        const retry = yield* repository.createOnce(sent, claimFor(sent, "k-1"))
        assert.deepEqual(retry, { pet: created.pet, replayed: true })
        assert.equal((yield* everyPet(repository)).length, 1)
      }),
    )
  })

  it("an interrupted create releases its key at once; a retry in the same batch replays the pet it creates, one pet", async () => {
    const filename = freshFile()
    const sent = newPet("Rex")
    await withRepository({ filename, ...slowBatches }, (repository) =>
      Effect.gen(function* () {
        const first = yield* Effect.fork(repository.createOnce(sent, claimFor(sent, "k-1")))
        yield* Effect.sleep("50 millis")
        yield* Fiber.interrupt(first)
        // The interrupted create is still in the batch, which has not committed yet.
        const retry = yield* repository.createOnce(sent, claimFor(sent, "k-1"))
        assert.equal(retry.replayed, true)
        assert.deepEqual(yield* everyPet(repository), [{ ...retry.pet }])
        assert.deepEqual(yield* storedKeys(filename), ["k-1"])
      }),
    )
  })

  it("IdempotencyKeyReused fails only its own create: the other creates of the batch are kept", async () => {
    const filename = freshFile()
    await withRepository({ filename, ...slowBatches }, (repository) =>
      Effect.gen(function* () {
        const rex = yield* repository.createOnce(newPet("Rex"), claimFor(newPet("Rex"), "k-1"))
        // An interrupted create with k-2 stays in the batch, ahead of another pet with k-2.
        const interrupted = yield* Effect.fork(
          repository.createOnce(newPet("Bella"), claimFor(newPet("Bella"), "k-2")),
        )
        yield* Effect.sleep("20 millis")
        yield* Fiber.interrupt(interrupted)
        const exits = yield* Effect.all(
          [
            Effect.exit(repository.createOnce(newPet("Max"), claimFor(newPet("Max"), "k-1"))),
            Effect.exit(repository.createOnce(newPet("Tom"), claimFor(newPet("Tom"), "k-2"))),
            Effect.exit(Effect.map(repository.create(newPet("plain")), (pet) => ({ pet }))),
            Effect.exit(repository.createOnce(newPet("Kim"), claimFor(newPet("Kim"), "k-3"))),
          ],
          { concurrency: "unbounded" },
        )
        assert.deepEqual(exits.map(failureTag), [
          Option.some("IdempotencyKeyReused"),
          Option.some("IdempotencyKeyReused"),
          Option.none(),
          Option.none(),
        ])
        assert.deepEqual(
          (yield* everyPet(repository)).map((pet) => pet.name),
          [rex.pet.name, "Bella", "plain", "Kim"],
        )
        assert.deepEqual(yield* storedKeys(filename), ["k-1", "k-2", "k-3"])
      }),
    )
  })

  it("a pet and its key are kept together or not at all: a batch whose key cannot be stored keeps no pet, and the retry creates it", async () => {
    const filename = freshFile()
    await withRepository({ filename }, () => Effect.void)
    await Effect.runPromise(
      runSql(
        filename,
        `CREATE TRIGGER refuse_key BEFORE INSERT ON idempotency_keys
         WHEN NEW.idempotency_key = 'k-1' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
      ),
    )
    const sent = newPet("Rex")
    await withRepository({ filename }, (repository) =>
      Effect.gen(function* () {
        const refused = yield* Effect.exit(repository.createOnce(sent, claimFor(sent, "k-1")))
        assert.ok(Exit.isFailure(refused))
        assert.deepEqual(yield* everyPet(repository), [])

        yield* runSql(filename, "DROP TRIGGER refuse_key")
        const retry = yield* repository.createOnce(sent, claimFor(sent, "k-1"))
        assert.equal(retry.replayed, false)
        assert.deepEqual(yield* everyPet(repository), [{ ...retry.pet }])
      }),
    )
  })
})
