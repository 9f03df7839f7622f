import assert from "node:assert/strict"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { processTestTimeout, spawnServer, type ServerProcessOptions } from "./server-process.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-refusal-"))
// Traversable by the unprivileged user the file cases run as.
chmodSync(directory, 0o755)
after(() => {
  chmodSync(directory, 0o755)
  rmSync(directory, { recursive: true, force: true })
})

/**
 * Runs the server, expecting it to refuse to start: it exits non-zero without listening and
 * explains why on stderr in one paragraph, with no stack trace. Returns the explanation.
 */
const refusal = async (options: ServerProcessOptions): Promise<string> => {
  const server = spawnServer(options)
  const timeout = setTimeout(() => server.child.kill("SIGKILL"), 20_000)
  const exit = await server.exited
  clearTimeout(timeout)
  const stderr = server.stderr().trim()
  assert.notEqual(exit.code, 0, `exited with ${JSON.stringify(exit)}; stderr: ${stderr}`)
  assert.ok(exit.code !== null, `was killed (${exit.signal}): it did not refuse in time`)
  assert.doesNotMatch(server.stdout(), /petstore listening/)
  assert.match(stderr, /^petstore: cannot open storage \(/)
  assert.doesNotMatch(stderr, /\n/, `more than one paragraph:\n${stderr}`)
  assert.doesNotMatch(stderr, /\bat .+:\d+:\d+/, `a stack trace:\n${stderr}`)
  return stderr
}

describe("the server refuses to start on storage it cannot use", () => {
  it("an SQLite file it may not write", { timeout: processTestTimeout }, async () => {
    const writable = path.join(directory, "writable")
    mkdirSync(writable)
    chmodSync(writable, 0o777)
    const filename = path.join(writable, "read-only.db")
    writeFileSync(filename, "")
    chmodSync(filename, 0o444)
    const message = await refusal({ storage: `file:${filename}`, unprivileged: true })
    assert.match(message, new RegExp(`the file ${filename} is not writable`))
  })

  it(
    "an SQLite file whose missing directory it cannot create",
    { timeout: processTestTimeout },
    async () => {
      const locked = path.join(directory, "locked")
      mkdirSync(locked)
      chmodSync(locked, 0o555)
      const filename = path.join(locked, "missing", "petstore.db")
      const message = await refusal({ storage: `file:${filename}`, unprivileged: true })
      assert.match(message, /the directory .*\/locked\/missing is missing and cannot be created/)
      assert.match(message, /EACCES/)
    },
  )

  it(
    "an SQLite path that cannot hold a database: under procfs, under a device",
    { timeout: processTestTimeout },
    async () => {
      assert.match(
        await refusal({ storage: "file:/proc/nope/x.db" }),
        /the directory \/proc\/nope is missing and cannot be created/,
      )
      assert.match(
        await refusal({ storage: "file:/dev/null/x.db" }),
        /\/dev\/null is not a directory/,
      )
    },
  )

  it("a PostgreSQL URL nothing answers at", { timeout: processTestTimeout }, async () => {
    const message = await refusal({ storage: "postgres://postgres@127.0.0.1:1/petstore" })
    assert.match(message, /PostgreSQL database "petstore" on 127\.0\.0\.1:1/)
    assert.match(message, /ECONNREFUSED/)
  })
})

await withTemporaryPostgresDatabase(
  "the server refuses to start on PostgreSQL credentials that fail",
  (database) => {
    it(
      "a user the server does not know, never showing the password",
      { timeout: processTestTimeout },
      async () => {
        const url = new URL(database.url)
        url.username = "no_such_petstore_user"
        url.password = "hunter2-secret"
        const message = await refusal({ storage: url.toString() })
        assert.match(message, /role "no_such_petstore_user" does not exist/)
        assert.doesNotMatch(message, /hunter2/)
      },
    )
  },
)
