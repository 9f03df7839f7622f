import assert from "node:assert/strict"
import { it } from "node:test"
import * as SqlClient from "@effect/sql/SqlClient"
import { CategoryId, Limit, NewPet } from "@petstore/core"
import { storageFailureReasons } from "@petstore/storage"
import { SqlApiKeyStore, SqlPetRepository, StoreFreeze } from "@petstore/storage/sql"
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Option } from "effect"
import { PostgresPetRepository } from "../src/index.js"
import { withTemporaryPostgresDatabase } from "../src/testing/index.js"

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const failureTag = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

/** `effect` on a pool of its own: another process, as far as PostgreSQL knows. */
const onOtherClient = <A, E>(url: string, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.scoped(
    Effect.flatMap(PostgresPetRepository.makeClient({ url, maxConnections: 1 }), (sql) =>
      Effect.provideService(effect, SqlClient.SqlClient, sql),
    ),
  )

const openStores = (url: string) =>
  Effect.flatMap(PostgresPetRepository.makeClient({ url }), (sql) =>
    Effect.all({ pets: SqlPetRepository.make(), keys: SqlApiKeyStore.make }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
    ),
  )

await withTemporaryPostgresDatabase("PostgreSQL store frozen", (database) => {
  it("refuses creates and key changes with StorageUnavailable from another process's freeze, serves reads, and takes them again once thawed", async () => {
    const { url } = await database.createAnother()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { pets, keys } = yield* openStores(url)
          const before = yield* pets.create(newPet("before"))
          yield* keys.create({ id: "key_kept", label: "kept", hash: "a".repeat(64) })
          const frozen = yield* onOtherClient(url, StoreFreeze.freeze)

          const refused = yield* Effect.exit(pets.create(newPet("while frozen")))
          assert.deepEqual(failureTag(refused), Option.some("StorageUnavailable"))
          if (Exit.isFailure(refused)) {
            assert.match(storageFailureReasons(refused.cause).join(": "), /store is frozen/)
          }
          assert.deepEqual(
            failureTag(
              yield* Effect.exit(keys.create({ id: "k2", label: "new", hash: "b".repeat(64) })),
            ),
            Option.some("StorageUnavailable"),
          )
          assert.deepEqual(
            failureTag(yield* Effect.exit(keys.revoke("key_kept"))),
            Option.some("StorageUnavailable"),
          )
          yield* keys.recordUses([{ id: "key_kept", at: 99 }])
          const page = yield* pets.list({
            status: Option.none(),
            afterId: Option.none(),
            limit: Limit.make(10),
          })
          assert.deepEqual(
            page.pets.map((pet) => pet.id),
            [before.id],
          )

          assert.deepEqual(
            yield* onOtherClient(url, StoreFreeze.thaw),
            Option.some(frozen.frozenAt),
          )
          assert.ok((yield* pets.create(newPet("after"))).id > before.id)
        }),
      ),
    )
  })

  it("a freeze waits for the create batch in flight, which commits, and every later batch is refused", async () => {
    const { url } = await database.createAnother()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { pets } = yield* openStores(url)
          // A batch in flight, as another process's group commit holds it: the writers' lock
          // taken and a pet inserted, not yet committed.
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const batch = yield* onOtherClient(
            url,
            Effect.flatMap(SqlClient.SqlClient, (sql) =>
              sql.withTransaction(
                Effect.gen(function* () {
                  yield* sql`LOCK TABLE pets IN EXCLUSIVE MODE`
                  yield* sql`INSERT INTO pets (name, category_id) VALUES ('in flight', 1)`
                  yield* Deferred.succeed(locked, undefined)
                  yield* Deferred.await(release)
                }),
              ),
            ),
          ).pipe(Effect.fork)
          yield* Deferred.await(locked)
          const freezing = yield* Effect.fork(onOtherClient(url, StoreFreeze.freeze))
          yield* Effect.sleep(Duration.millis(300))
          assert.equal(Option.isNone(yield* Fiber.poll(freezing)), true, "the freeze did not wait")
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(batch)
          yield* Fiber.join(freezing)

          const page = yield* pets.list({
            status: Option.none(),
            afterId: Option.none(),
            limit: Limit.make(10),
          })
          assert.deepEqual(
            page.pets.map((pet) => pet.name),
            ["in flight"],
          )
          assert.deepEqual(
            failureTag(yield* Effect.exit(pets.create(newPet("after the freeze")))),
            Option.some("StorageUnavailable"),
          )
        }),
      ),
    )
  })
})
