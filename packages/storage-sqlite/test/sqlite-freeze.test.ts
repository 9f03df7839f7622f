import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  Limit,
  NewPet,
  petFingerprint,
} from "@petstore/core"
import { storageFailureReasons } from "@petstore/storage"
import { SqlApiKeyStore, SqlPetRepository, StoreFreeze } from "@petstore/storage/sql"
import { Cause, Effect, Exit, Option } from "effect"
import { SqlitePetRepository } from "../src/index.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-sqlite-freeze-"))
after(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshFile = () => path.join(directory, `store-${++files}.db`)

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })
const hash = (digit: string) => digit.repeat(64)

/** `effect` on a connection of its own to `filename`: another process, as far as SQLite knows. */
const onOtherConnection = <A, E>(
  filename: string,
  effect: Effect.Effect<A, E, SqlClient.SqlClient>,
) =>
  Effect.scoped(
    Effect.flatMap(SqlitePetRepository.makeClient({ filename }), (sql) =>
      Effect.provideService(effect, SqlClient.SqlClient, sql),
    ),
  )

/** The repository and the key store on one connection, as a server opens them. */
const openStores = (filename: string) =>
  Effect.flatMap(SqlitePetRepository.makeClient({ filename }), (sql) =>
    Effect.all({ pets: SqlPetRepository.make(), keys: SqlApiKeyStore.make }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
    ),
  )

const failureTag = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) => error._tag)
    : Option.none()

describe("SQLite store frozen", () => {
  it("refuses every create with StorageUnavailable from the moment the freeze commits on another connection, serves reads, and takes creates again once thawed", async () => {
    const filename = freshFile()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { pets } = yield* openStores(filename)
          const before = yield* pets.create(newPet("before"))
          const frozen = yield* onOtherConnection(filename, StoreFreeze.freeze)
          assert.equal(frozen.already, false)

          const plain = yield* Effect.exit(pets.create(newPet("while frozen")))
          assert.deepEqual(failureTag(plain), Option.some("StorageUnavailable"))
          if (Exit.isFailure(plain)) {
            assert.match(storageFailureReasons(plain.cause).join(": "), /store is frozen/)
          }
          const pet = newPet("while frozen, with a key")
          const keyed = yield* Effect.exit(
            pets.createOnce(pet, {
              scope: IdempotencyScope.make("principal"),
              key: IdempotencyKey.make("k1"),
              fingerprint: petFingerprint(pet),
            }),
          )
          assert.deepEqual(failureTag(keyed), Option.some("StorageUnavailable"))

          const page = yield* pets.list({
            status: Option.none(),
            afterId: Option.none(),
            limit: Limit.make(10),
          })
          assert.deepEqual(
            page.pets.map((listed) => listed.id),
            [before.id],
          )
          assert.deepEqual(
            Option.map(yield* pets.findById(before.id), (found) => found.name),
            Option.some("before"),
          )

          const thawed = yield* onOtherConnection(filename, StoreFreeze.thaw)
          assert.deepEqual(thawed, Option.some(frozen.frozenAt))
          const afterThaw = yield* pets.create(newPet("after"))
          assert.ok(afterThaw.id > before.id)
        }),
      ),
    )
  })

  it("refuses a key created or revoked while frozen, and still records a key's use", async () => {
    const filename = freshFile()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { keys } = yield* openStores(filename)
          yield* keys.create({ id: "key_kept", label: "kept", hash: hash("a") })
          yield* onOtherConnection(filename, StoreFreeze.freeze)
          const created = yield* Effect.exit(
            keys.create({ id: "key_new", label: "new", hash: hash("b") }),
          )
          assert.deepEqual(failureTag(created), Option.some("StorageUnavailable"))
          const revoked = yield* Effect.exit(keys.revoke("key_kept"))
          assert.deepEqual(failureTag(revoked), Option.some("StorageUnavailable"))
          yield* keys.recordUses([{ id: "key_kept", at: 1234 }])
          const listed = yield* keys.list
          assert.deepEqual(
            listed.map((record) => [record.id, Option.getOrNull(record.lastUsedAt)]),
            [["key_kept", 1234]],
          )
          assert.equal(Option.isSome(yield* keys.findIdByHash(hash("a"))), true)
        }),
      ),
    )
  })

  it("freezing a frozen store keeps its first time; thawing a store that is not frozen changes nothing", async () => {
    const filename = freshFile()
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          yield* openStores(filename)
          const first = yield* onOtherConnection(filename, StoreFreeze.freeze)
          const second = yield* onOtherConnection(filename, StoreFreeze.freeze)
          assert.deepEqual(second, { frozenAt: first.frozenAt, already: true })
          assert.deepEqual(
            yield* onOtherConnection(filename, StoreFreeze.frozenSince),
            Option.some(first.frozenAt),
          )
          yield* onOtherConnection(filename, StoreFreeze.thaw)
          assert.deepEqual(yield* onOtherConnection(filename, StoreFreeze.thaw), Option.none())
        }),
      ),
    )
  })
})
