import assert from "node:assert/strict"
import path from "node:path"
import { describe, it } from "node:test"
import { Either, Redacted } from "effect"
import {
  describeStorageChoice,
  parseStorageChoice,
  type StorageChoice,
} from "../src/storage/storage-selection.js"

const parsed = (text: string): StorageChoice => {
  const choice = parseStorageChoice(text)
  assert.ok(Either.isRight(choice), `${text} was refused`)
  return choice.right
}

const refusal = (text: string): string => {
  const choice = parseStorageChoice(text)
  assert.ok(Either.isLeft(choice), `${text} was accepted`)
  return choice.left
}

describe("PETSTORE_STORAGE", () => {
  it("memory selects the in-memory store", () => {
    assert.deepEqual(parsed("memory"), { kind: "memory" })
  })

  it("file:<path> selects an SQLite file, a relative path resolved against the working directory", () => {
    assert.deepEqual(parsed("file:./data/petstore.db"), {
      kind: "sqlite",
      filename: path.join(process.cwd(), "data", "petstore.db"),
    })
    assert.deepEqual(parsed("file:/var/lib/petstore/pets.db"), {
      kind: "sqlite",
      filename: "/var/lib/petstore/pets.db",
    })
    assert.match(describeStorageChoice(parsed("file:/tmp/p.db")), /^SQLite file \/tmp\/p\.db$/)
    assert.match(refusal("file:"), /needs a path/)
  })

  it("postgres:// and postgresql:// URLs select PostgreSQL", () => {
    for (const url of ["postgres://app@db:5432/pets", "postgresql://app@db:5432/pets"]) {
      const choice = parsed(url)
      assert.equal(choice.kind, "postgres")
      assert.ok(choice.kind === "postgres" && Redacted.value(choice.url) === url)
      assert.equal(describeStorageChoice(choice), 'PostgreSQL database "pets" on db:5432 as app')
    }
  })

  it("never shows a password: not when describing, logging or refusing", () => {
    const secret = "s3cr%40t-pa55"
    const choice = parsed(`postgres://app:${secret}@db.example:6543/pets?sslmode=require`)
    for (const shown of [describeStorageChoice(choice), JSON.stringify(choice), String(choice)]) {
      assert.doesNotMatch(shown, /s3cr|pa55/)
    }
    assert.doesNotMatch(refusal(`postgres://app:${secret}@[not a host/pets`), /s3cr|pa55/)
    assert.doesNotMatch(refusal(`mysql://app:${secret}@db/pets`), /s3cr|pa55/)
  })

  it("refuses anything else, naming what is accepted", () => {
    assert.match(
      refusal("sqlite"),
      /"memory", "file:<path>" or a "postgres:\/\/…" URL; got "sqlite"/,
    )
    assert.match(refusal(""), /must be/)
  })

  it("refuses a PostgreSQL URL whose %-escapes do not decode, in one line, never echoing it", () => {
    for (const url of [
      "postgres://us%zzer@127.0.0.1/db",
      "postgres://app:pa%zz-s3cret@db.example/pets",
      "postgres://app:s3cret@db.example/pe%zzts",
      "postgresql://app:s3cret%@db.example/pets",
    ]) {
      const message = refusal(url)
      assert.match(message, /^PETSTORE_STORAGE is not a valid PostgreSQL URL: /, url)
      assert.doesNotMatch(message, /s3cret|us%zzer|\n/, url)
    }
  })

  it("describes any choice without throwing, even one not made by parseStorageChoice", () => {
    for (const url of ["postgres://us%zzer:s3cret@127.0.0.1/db", "not a URL at all"]) {
      const choice: StorageChoice = { kind: "postgres", url: Redacted.make(url) }
      assert.equal(describeStorageChoice(choice), "PostgreSQL (a URL that cannot be read)")
    }
  })
})
