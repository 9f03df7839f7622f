import assert from "node:assert/strict"
import { randomUUID } from "node:crypto"
import { it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
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
import { Array, Cause, Effect, Exit, Option, Redacted, Schedule, Schema } from "effect"
import { PostgresPetRepository } from "../src/index.js"
import { withTemporaryPostgresDatabase } from "../src/testing/index.js"

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const claimFor = (pet: NewPet, key: string): IdempotencyClaim => ({
  scope: IdempotencyScope.make("principal"),
  key: IdempotencyKey.make(key),
  fingerprint: petFingerprint(pet),
})

/** Every pet after `afterId`, 100 at a time. */
const listAfter = (repository: PetRepository["Type"], afterId: Pet["id"]) =>
  Effect.gen(function* () {
    const seen: Array<Pet> = []
    let after = afterId
    for (;;) {
      const page = yield* repository.list({
        status: Option.none(),
        afterId: Option.some(after),
        limit: Limit.make(100),
      })
      seen.push(...page.pets)
      const last = Array.last(page.pets)
      if (!page.hasMore || Option.isNone(last)) return seen
      after = last.value.id
    }
  })

/** Runs SQL on a database directly, beside the repository. */
const runSql = (url: string, statement: string) =>
  Effect.scoped(
    Effect.flatMap(
      PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(
        Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      ),
      (sql) => sql.unsafe(statement),
    ),
  )

const storedKeys = (url: string, prefix: string) =>
  runSql(
    url,
    `SELECT idempotency_key FROM idempotency_keys WHERE idempotency_key LIKE '${prefix}%' ORDER BY idempotency_key`,
  ).pipe(
    Effect.flatMap(
      Schema.decodeUnknown(Schema.Array(Schema.Struct({ idempotency_key: Schema.String }))),
    ),
    Effect.map((rows) => rows.map((row) => row.idempotency_key)),
  )

await withTemporaryPostgresDatabase("PostgreSQL: idempotency keys", (database) => {
  it("two repositories on one database, as two processes, creating with the same keys at once make one pet per key", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const first = yield* PostgresPetRepository.make({ url: database.url })
          const second = yield* PostgresPetRepository.make({ url: database.url })
          const start = yield* first.create(newPet("marker"))
          const run = randomUUID()
          const createAll = (repository: PetRepository["Type"], keys: ReadonlyArray<string>) =>
            Effect.forEach(
              keys,
              (key) => repository.createOnce(newPet(key), claimFor(newPet(key), key)),
              { concurrency: "unbounded" },
            )
          const keys: Array<string> = []
          for (const round of Array.range(1, 5)) {
            const batch = Array.makeBy(40, (i) => `${run}-${round}-${i}`)
            keys.push(...batch)
            const [fromFirst, fromSecond] = yield* Effect.all(
              [createAll(first, batch), createAll(second, batch)],
              { concurrency: "unbounded" },
            )
            for (const [a, b] of Array.zip(fromFirst, fromSecond)) {
              assert.equal(a.pet.id, b.pet.id)
              assert.equal([a, b].filter((answer) => !answer.replayed).length, 1)
            }
          }
          const listed = yield* listAfter(first, start.id)
          assert.deepEqual(listed.map((pet) => pet.name).sort(), [...keys].sort())
        }),
      ),
    ))

  it("purges expired keys in the background, keeping live ones", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* PostgresPetRepository.make({
            url: database.url,
            idempotencyTtl: "500 millis",
            idempotencyPurgeInterval: "50 millis",
          })
          const prefix = `purge-${randomUUID()}`
          yield* repository.createOnce(newPet("old"), claimFor(newPet("old"), `${prefix}-old`))
          assert.deepEqual(yield* storedKeys(database.url, prefix), [`${prefix}-old`])
          yield* Effect.repeat(storedKeys(database.url, prefix), {
            until: (keys) => keys.length === 0,
            schedule: Schedule.spaced("50 millis"),
          }).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => "never purged" }))
          yield* repository.createOnce(newPet("new"), claimFor(newPet("new"), `${prefix}-new`))
          yield* Effect.sleep("200 millis")
          assert.deepEqual(yield* storedKeys(database.url, prefix), [`${prefix}-new`])
        }),
      ),
    ))

  it("a create with a key that fails with StorageUnavailable stores nothing: the retry creates the pet", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* PostgresPetRepository.make({ url: database.url })
          const start = yield* repository.create(newPet("marker"))
          const key = randomUUID()
          const sent = newPet("during an outage")
          yield* Effect.promise(() => database.refuseConnections())
          const during = yield* Effect.exit(repository.createOnce(sent, claimFor(sent, key)))
          yield* Effect.promise(() => database.allowConnections())
          assert.ok(Exit.isFailure(during))
          assert.deepEqual(
            Option.map(Cause.failureOption(during.cause), (error) => error._tag),
            Option.some("StorageUnavailable"),
          )
          const retry = yield* repository.createOnce(sent, claimFor(sent, key))
          assert.equal(retry.replayed, false)
          assert.deepEqual(
            (yield* listAfter(repository, start.id)).map((pet) => pet.id),
            [retry.pet.id],
          )
        }),
      ),
    ))
})
