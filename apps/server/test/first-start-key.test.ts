import assert from "node:assert/strict"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { runKeysCli } from "./keys-cli-process.js"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-first-key-"))
after(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshFile = () => path.join(directory, `store-${++files}.db`)

/** The key a first start printed, if it printed one. */
const printedKey = (server: RunningServer) =>
  /Authorization: Bearer (pst_[0-9A-Za-z]{49})/.exec(server.stdout())?.[1]

const statusWith = async (server: RunningServer, key: string | undefined) => {
  const headers: Record<string, string> =
    key === undefined ? {} : { Authorization: `Bearer ${key}` }
  const response = await fetch(`${server.url}/pets`, { headers })
  await response.arrayBuffer()
  return response.status
}

/** A server with no PETSTORE_API_KEYS. */
const startWithoutEnvKeys = (storage: string) => startServerProcess({ storage, apiKeys: [] })

describe("the first start with durable storage", { timeout: processTestTimeout }, () => {
  it("creates a key, prints it once, keeps only its hash; a restart makes none and keeps accepting it", async () => {
    const file = freshFile()
    const first = await startWithoutEnvKeys(`file:${file}`)
    let key: string | undefined
    try {
      key = printedKey(first)
      assert.ok(key, first.stdout())
      assert.equal(first.stdout().split(key).length - 1, 2, "the key appears in the banner only")
      assert.ok(!first.stderr().includes(key))
      assert.equal(await statusWith(first, undefined), 401)
      assert.equal(await statusWith(first, key), 200)
    } finally {
      await first.stop()
    }
    const bytes = [file, `${file}-wal`]
      .filter((name) => existsSync(name))
      .map((name) => readFileSync(name).toString("latin1"))
      .join("")
    assert.ok(!bytes.includes(key), "the storage holds the key in plain text")

    const second = await startWithoutEnvKeys(`file:${file}`)
    try {
      assert.doesNotMatch(second.stdout(), /pst_/, "a restart printed a key")
      assert.equal(await statusWith(second, key), 200)
    } finally {
      await second.stop()
    }
    const listed = await runKeysCli(["list"], `file:${file}`)
    assert.equal(listed.stdout.trimEnd().split("\n").length, 2, listed.stdout)
    assert.match(listed.stdout, /created at first start/)
  })

  it("creates none when PETSTORE_API_KEYS has a key, or when a key is stored", async () => {
    const file = freshFile()
    const withEnvKey = await startServerProcess({ storage: `file:${file}`, apiKeys: ["dev-key"] })
    await withEnvKey.stop()
    assert.doesNotMatch(withEnvKey.stdout(), /pst_/)
    assert.match((await runKeysCli(["list"], `file:${file}`)).stdout, /No API key is stored/)

    const created = await runKeysCli(["create", "--label", "ops"], `file:${file}`)
    assert.equal(created.code, 0, created.stderr)
    const withStoredKey = await startWithoutEnvKeys(`file:${file}`)
    await withStoredKey.stop()
    assert.doesNotMatch(withStoredKey.stdout(), /pst_/)
  })
})

await withTemporaryPostgresDatabase("the first start on PostgreSQL", (database) => {
  it(
    "two processes starting at once on an empty store create one key between them",
    { timeout: processTestTimeout },
    async () => {
      const fresh = await database.createAnother()
      const servers = await Promise.all([
        startWithoutEnvKeys(fresh.url),
        startWithoutEnvKeys(fresh.url),
      ])
      try {
        const keys = servers.flatMap((server) => printedKey(server) ?? [])
        assert.equal(keys.length, 1, "not exactly one process printed a key")
        for (const server of servers) assert.equal(await statusWith(server, keys[0]), 200)
      } finally {
        await Promise.all(servers.map((server) => server.stop()))
      }
    },
  )
})
