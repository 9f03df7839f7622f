import assert from "node:assert/strict"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { SqlError } from "@effect/sql/SqlError"
import { CategoryId, Limit, NewPet, PetRepository } from "@petstore/core"
import { Array, Cause, Deferred, Effect, Exit, Fiber, Option } from "effect"
import { storageFailureReasons } from "@petstore/storage"
import { repositoryContract } from "@petstore/storage/testing"
import { SqlitePetRepository } from "../src/index.js"
import { sqliteIntegrityCheck } from "../src/testing/index.js"
import { driverCode } from "@petstore/storage/sql"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-sqlite-"))
after(() => rmSync(directory, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(directory, `store-${++files}.db`)

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const withRepository = <A, E>(
  filename: string,
  use: (repository: PetRepository["Type"]) => Effect.Effect<A, E>,
) => Effect.runPromise(Effect.scoped(Effect.flatMap(SqlitePetRepository.make({ filename }), use)))

/** Runs SQL on the file directly, beside the repository. */
const runSql = (filename: string, statement: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(
        SqliteClient.make({ filename }).pipe(
          Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
        ),
        (sql) => sql.unsafe(statement),
      ),
    ),
  )

const openFailure = async (filename: string) => {
  const exit = await Effect.runPromiseExit(Effect.scoped(SqlitePetRepository.make({ filename })))
  assert.ok(Exit.isFailure(exit), `opening ${filename} succeeded`)
  assert.deepEqual(
    Option.map(Cause.failureOption(exit.cause), (error) => error._tag),
    Option.some("StorageUnavailable"),
  )
  return storageFailureReasons(exit.cause).join(": ")
}

const contractFile = freshFile()
repositoryContract("SQLite file", SqlitePetRepository.layer({ filename: contractFile }), {
  withIdempotencyTtl: (ttl) =>
    SqlitePetRepository.layer({ filename: contractFile, idempotencyTtl: ttl }),
})

describe("SQLite file", () => {
  it("keeps pets across reopening, and continues ids above all previous ones", async () => {
    const filename = freshFile()
    const created = await withRepository(filename, (repository) =>
      Effect.forEach(Array.range(1, 5), (i) => repository.create(newPet(`pet ${i}`))),
    )
    const [listed, next] = await withRepository(filename, (repository) =>
      Effect.all([
        repository.list({ status: Option.none(), afterId: Option.none(), limit: Limit.make(10) }),
        repository.create(newPet("after reopening")),
      ]),
    )
    assert.deepEqual(
      listed.pets.map((pet) => ({ ...pet })),
      created.map((pet) => ({ ...pet })),
    )
    assert.ok(created.every((pet) => next.id > pet.id))
  })

  it("answers each create only once it is committed: another connection sees every pet answered", async () => {
    const filename = freshFile()
    await withRepository(filename, (repository) =>
      Effect.gen(function* () {
        // One at a time (each a batch of its own), then twenty together (one batch).
        for (const i of Array.range(1, 3)) {
          const pet = yield* repository.create(newPet(`alone ${i}`))
          const rows = yield* Effect.promise(() =>
            runSql(filename, `SELECT name FROM pets WHERE id = ${pet.id}`),
          )
          assert.deepEqual(rows, [{ name: `alone ${i}` }])
        }
        const together = yield* Effect.forEach(
          Array.range(1, 20),
          (i) =>
            Effect.flatMap(repository.create(newPet(`together ${i}`)), (pet) =>
              Effect.promise(() => runSql(filename, `SELECT name FROM pets WHERE id = ${pet.id}`)),
            ),
          { concurrency: "unbounded" },
        )
        assert.deepEqual(
          together,
          Array.range(1, 20).map((i) => [{ name: `together ${i}` }]),
        )
      }),
    )
  })

  it("creates the file's directory, and keeps the file in WAL mode", async () => {
    const filename = path.join(directory, "nested", "deeper", "pets.db")
    await withRepository(filename, (repository) => repository.create(newPet("Rex")))
    const mode = await runSql(filename, "PRAGMA journal_mode")
    assert.deepEqual(mode, [{ journal_mode: "wal" }])
    assert.deepEqual(await sqliteIntegrityCheck(filename), ["ok"])
  })

  it("never produces an id beyond 2^53 − 1: the CHECK refusing it is a defect, not StorageUnavailable", async () => {
    const filename = freshFile()
    await withRepository(filename, (repository) => repository.create(newPet("first")))
    await runSql(
      filename,
      `UPDATE sqlite_sequence SET seq = ${Number.MAX_SAFE_INTEGER - 1} WHERE name = 'pets'`,
    )
    const [last, tooMany] = await withRepository(filename, (repository) =>
      Effect.all([
        Effect.exit(repository.create(newPet("last"))),
        Effect.exit(repository.create(newPet("one too many"))),
      ]),
    )
    assert.ok(Exit.isSuccess(last))
    assert.equal(last.value.id, Number.MAX_SAFE_INTEGER)
    assert.ok(Exit.isFailure(tooMany))
    assert.ok(Option.isNone(Cause.failureOption(tooMany.cause)), "a retry cannot help")
    const defect = Option.getOrThrow(Cause.dieOption(tooMany.cause))
    assert.ok(defect instanceof SqlError)
    assert.match(String(driverCode(defect)), /^SQLITE_CONSTRAINT/)
  })

  it("fails a create with StorageUnavailable after busyTimeout while another connection holds the write lock", async () => {
    const filename = freshFile()
    await withRepository(filename, (repository) => repository.create(newPet("first")))
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const other = yield* SqliteClient.make({ filename }).pipe(
            Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
          )
          const locked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            other.withTransaction(
              Effect.zipRight(
                other`INSERT INTO pets (name, category_id) VALUES ('held', 1)`,
                Effect.zipRight(Deferred.succeed(locked, undefined), Deferred.await(release)),
              ),
            ),
          )
          yield* Deferred.await(locked)

          const repository = yield* SqlitePetRepository.make({
            filename,
            busyTimeout: "100 millis",
          })
          const started = Date.now()
          const refused = yield* Effect.exit(repository.create(newPet("while locked")))
          const waited = Date.now() - started
          assert.ok(Exit.isFailure(refused))
          const failure = Option.getOrThrow(Cause.failureOption(refused.cause))
          assert.equal(failure._tag, "StorageUnavailable")
          assert.equal(driverCode(failure.cause), "SQLITE_BUSY")
          // better-sqlite3 waits 5 s unless told otherwise.
          assert.ok(waited < 2000, `the create waited ${waited} ms`)

          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(holder)
          const after = yield* repository.create(newPet("after the lock"))
          assert.equal(after.name, "after the lock")
        }),
      ),
    )
  })

  it("refuses to open when the directory cannot be created, saying so", async () => {
    const notADirectory = path.join(directory, "plain-file")
    writeFileSync(notADirectory, "")
    const message = await openFailure(path.join(notADirectory, "sub", "pets.db"))
    assert.match(message, /plain-file is not a directory, so .*plain-file\/sub cannot be created/)
  })

  it(
    "refuses at once a directory that cannot exist: under procfs, or under a device",
    { timeout: 10_000 },
    async () => {
      // Node's recursive mkdir never returns on procfs.
      assert.match(
        await openFailure("/proc/petstore-nope/deeper/pets.db"),
        /the directory \/proc\/petstore-nope\/deeper is missing and cannot be created/,
      )
      assert.match(await openFailure("/dev/null/pets.db"), /^\/dev\/null is not a directory$/)
    },
  )

  it("refuses to open a file that is not an SQLite database, saying so", async () => {
    const filename = freshFile()
    writeFileSync(filename, "this is not a database, just text long enough to have a header")
    assert.match(await openFailure(filename), /not a database/)
  })

  it(
    "refuses to open a file it may not write, saying so",
    {
      skip:
        process.getuid?.() === 0
          ? "running as root, which may write any file (apps/server tests run this case unprivileged)"
          : false,
    },
    async () => {
      const filename = freshFile()
      await withRepository(filename, (repository) => repository.create(newPet("Rex")))
      chmodSync(filename, 0o444)
      assert.match(await openFailure(filename), /is not writable/)
    },
  )
})
