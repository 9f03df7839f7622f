import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { createdId, createdKey, runKeysCli } from "./keys-cli-process.js"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-keys-cli-"))
after(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshStorage = () => `file:${path.join(directory, `store-${++files}.db`)}`

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const statusWith = async (server: RunningServer, key: string) => {
  const response = await fetch(`${server.url}/pets`, {
    headers: { Authorization: `Bearer ${key}` },
  })
  await response.arrayBuffer()
  return response.status
}

/** Milliseconds from `since` until every server refuses `key`; fails after 5 s. */
const refusedEverywhereAfter = async (
  servers: ReadonlyArray<RunningServer>,
  key: string,
  since: number,
) => {
  while (Date.now() - since < 5_000) {
    const statuses = await Promise.all(servers.map((server) => statusWith(server, key)))
    if (statuses.every((status) => status === 401)) return Date.now() - since
    for (const status of statuses) assert.ok(status === 200 || status === 401, String(status))
    await sleep(50)
  }
  assert.fail("the revoked key was still accepted 5 s after `revoke`")
}

/**
 * The walk-through: create a key with the CLI, use it on every running server, list it (never
 * showing the key or its hash), revoke it, and see every server refuse it within 2 seconds.
 */
const createUseListRevoke = async (storage: string, servers: ReadonlyArray<RunningServer>) => {
  const created = await runKeysCli(["create", "--label", "ci deploy"], storage)
  assert.equal(created.code, 0, created.stderr)
  const key = createdKey(created)
  const id = createdId(created)
  assert.equal(created.stdout.split(key).length - 1, 1, "create prints the key once")

  for (const server of servers) assert.equal(await statusWith(server, key), 200)
  const usedAt = Date.now()

  // Uses are written within a second or so, in the background.
  await sleep(Math.max(0, usedAt + 1_200 - Date.now()))
  const listed = await runKeysCli(["list"], storage)
  assert.equal(listed.code, 0, listed.stderr)
  const time = "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ"
  // id, label, created, last used
  assert.match(listed.stdout, new RegExp(`^${id} +ci deploy +${time} +${time}$`, "m"))
  assert.doesNotMatch(listed.stdout, /pst_/)
  assert.ok(!listed.stdout.includes(sha256(key)), "list shows the key's hash")

  // Used until the moment it is revoked, so every server holds a fresh verdict on it. The
  // revocation takes effect when its transaction commits, before the command has exited, so a
  // server may already answer 401 here; once it has, it must never accept the key again.
  let revoking = true
  const refusedBy = new Set<RunningServer>()
  const keepUsing = (async () => {
    while (revoking) {
      for (const server of servers) {
        const status = await statusWith(server, key)
        if (refusedBy.has(server)) assert.equal(status, 401, "accepted again after refusing")
        else if (status === 401) refusedBy.add(server)
        else assert.equal(status, 200)
      }
      await sleep(50)
    }
  })()
  // A failure is reported once the command has returned, as the test's own.
  keepUsing.catch(() => {})
  const revoked = await runKeysCli(["revoke", id], storage).finally(() => (revoking = false))
  await keepUsing
  assert.equal(revoked.code, 0, revoked.stderr)
  const elapsed = await refusedEverywhereAfter(servers, key, Date.now())
  assert.ok(elapsed < 2_000, `still accepted ${elapsed} ms after revoke returned`)

  const after = await runKeysCli(["list"], storage)
  assert.ok(!after.stdout.includes(id), after.stdout)
  for (const server of servers) {
    const output = server.stdout() + server.stderr()
    assert.ok(!output.includes(key), "a server logged the key")
    assert.ok(output.includes(`"keyId":"${id}"`), "the access log names the key's id")
  }
  return { key, id }
}

describe("npm run keys (SQLite)", { timeout: processTestTimeout }, () => {
  it("create → the server accepts the key → list never shows it → revoke → 401 within 2 s", async () => {
    const storage = freshStorage()
    const server = await startServerProcess({ storage })
    try {
      const { key } = await createUseListRevoke(storage, [server])
      // The file (and its write-ahead log) holds the key's hash, never the key.
      const file = storage.slice("file:".length)
      const bytes = [file, `${file}-wal`]
        .filter((name) => existsSync(name))
        .map((name) => readFileSync(name).toString("latin1"))
        .join("")
      assert.ok(!bytes.includes(key), "the storage holds the key in plain text")
      assert.ok(!bytes.includes(key.slice(4, 40)), "the storage holds part of the key")
    } finally {
      await server.stop()
    }
  })

  it("revoke of an unknown id exits non-zero and says so", async () => {
    const result = await runKeysCli(["revoke", "key_0000000000000000"], freshStorage())
    assert.equal(result.code, 1)
    assert.match(result.stderr, /no stored API key has the id "key_0000000000000000"/)
  })

  it("create without a label, or with an empty one, exits non-zero and prints no key", async () => {
    const storage = freshStorage()
    for (const args of [["create"], ["create", "--label", ""]]) {
      const result = await runKeysCli(args, storage)
      assert.equal(result.code, 1, args.join(" "))
      assert.doesNotMatch(result.stdout, /pst_/)
    }
  })

  it("refuses memory storage, pointing at PETSTORE_API_KEYS", async () => {
    for (const command of [["create", "--label", "x"], ["list"]]) {
      const result = await runKeysCli(command, "memory")
      assert.equal(result.code, 1)
      assert.equal(result.stdout, "")
      assert.match(result.stderr, /PETSTORE_STORAGE is memory.*PETSTORE_API_KEYS/)
    }
  })

  it("explains a storage it cannot open, without a stack", async () => {
    const result = await runKeysCli(["list"], "postgres://petstore:secret@127.0.0.1:1/none")
    assert.equal(result.code, 1)
    assert.match(result.stderr, /^petstore keys: cannot open storage \(PostgreSQL/)
    assert.doesNotMatch(result.stderr, /secret|    at /)
  })
})

await withTemporaryPostgresDatabase(
  "npm run keys (PostgreSQL, two server processes)",
  (database) => {
    it(
      "create → both servers accept the key → list never shows it → revoke → both refuse it within 2 s",
      { timeout: processTestTimeout },
      async () => {
        const fresh = await database.createAnother()
        const servers = await Promise.all([
          startServerProcess({ storage: fresh.url }),
          startServerProcess({ storage: fresh.url }),
        ])
        try {
          await createUseListRevoke(fresh.url, servers)
        } finally {
          await Promise.all(servers.map((server) => server.stop()))
        }
      },
    )
  },
)
