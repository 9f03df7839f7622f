import assert from "node:assert/strict"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { CategoryId, NewPet, type StorageUnavailable } from "@petstore/core"
import { PostgresPetRepository } from "@petstore/storage-postgres"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { Cause, Effect, Either, Exit, Option, Redacted, type Scope } from "effect"
import { explainStorageFailure } from "../src/storage/explain-storage-failure.js"
import { parseStorageChoice, type StorageChoice } from "../src/storage/storage-selection.js"

// What the server prints when it cannot open its storage, from the adapters' real failures: the
// storage packages test the reasons, these the explanation the server makes of them.

const directory = mkdtempSync(path.join(tmpdir(), "petstore-storage-failure-"))
after(() => rmSync(directory, { recursive: true, force: true }))

let files = 0
const freshFile = () => path.join(directory, `store-${++files}.db`)

/** The explanation of the failure to open, which must be StorageUnavailable. */
const explained = async (
  choice: StorageChoice,
  open: Effect.Effect<unknown, StorageUnavailable, Scope.Scope>,
): Promise<string> => {
  const exit = await Effect.runPromiseExit(Effect.scoped(open))
  assert.ok(Exit.isFailure(exit), "opening succeeded")
  assert.deepEqual(
    Option.map(Cause.failureOption(exit.cause), (error) => error._tag),
    Option.some("StorageUnavailable"),
  )
  return explainStorageFailure(choice, exit.cause)
}

const chosen = (text: string): StorageChoice =>
  Either.getOrThrowWith(parseStorageChoice(text), (refusal) => new Error(refusal))

const openSqlite = (filename: string) =>
  explained({ kind: "sqlite", filename }, SqlitePetRepository.make({ filename }))

describe("explainStorageFailure: an SQLite file", () => {
  it("says the directory cannot be created, naming the ancestor that is no directory", async () => {
    const notADirectory = path.join(directory, "plain-file")
    writeFileSync(notADirectory, "")
    const message = await openSqlite(path.join(notADirectory, "sub", "pets.db"))
    assert.match(message, /plain-file is not a directory, so .*plain-file\/sub cannot be created/)
  })

  it("says a file is not an SQLite database", async () => {
    const filename = freshFile()
    writeFileSync(filename, "this is not a database, just text long enough to have a header")
    assert.match(await openSqlite(filename), /not a database/)
  })

  it(
    "says a file may not be written",
    {
      skip:
        process.getuid?.() === 0
          ? "running as root, which may write any file (storage-refusal.test.ts runs this case unprivileged)"
          : false,
    },
    async () => {
      const filename = freshFile()
      await Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(SqlitePetRepository.make({ filename }), (repository) =>
            repository.create(NewPet.make({ name: "Rex", categoryId: CategoryId.make(1) })),
          ),
        ),
      )
      chmodSync(filename, 0o444)
      assert.match(await openSqlite(filename), /is not writable/)
    },
  )
})

await withTemporaryPostgresDatabase("explainStorageFailure: PostgreSQL", (database) => {
  it("says a role does not exist, never showing the password", async () => {
    const url = new URL(database.url)
    url.username = "no_such_role_petstore"
    url.password = "secret-password"
    const message = await explained(
      chosen(url.toString()),
      PostgresPetRepository.make({ url: url.toString() }),
    )
    assert.match(message, /role "no_such_role_petstore" does not exist/)
    assert.doesNotMatch(message, /secret-password/)
  })
})

describe("explainStorageFailure: PostgreSQL that cannot be reached or read", () => {
  it("says why an unreachable PostgreSQL refused", async () => {
    const url = "postgres://postgres@127.0.0.1:1/petstore"
    const message = await explained(chosen(url), PostgresPetRepository.make({ url }))
    assert.match(message, /ECONNREFUSED 127\.0\.0\.1:1/)
  })

  it("says a URL's %-escapes do not decode, in one line, without the password", async () => {
    const url = "postgres://app:pa%zz-s3cret@127.0.0.1:1/petstore"
    const message = await explained(
      { kind: "postgres", url: Redacted.make(url) },
      PostgresPetRepository.make({ url }),
    )
    assert.match(message, /not a valid PostgreSQL URL/)
    assert.doesNotMatch(message, /s3cret|\n/)
  })
})
