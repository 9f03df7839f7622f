import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { ApiKeyStore } from "@petstore/storage"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Effect } from "effect"
import { apiKeyStoreLayer } from "../src/storage/api-key-store-selection.js"
import { runStorageCli } from "./backup/backup-harness.js"
import { createdId, createdKey, runKeysCli } from "./keys-cli-process.js"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-keys-cli-"))
after(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshStorage = () => `file:${path.join(directory, `store-${++files}.db`)}`

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

/** A control character (C0, DEL, C1) or a bidirectional formatting character. */
const unprintable = /[\p{Cc}\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u

const codePoint = (character: string) =>
  `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`

/** That `output` holds no such character raw, line breaks aside. */
const assertPrintable = (output: string) => {
  for (const line of output.split("\n")) {
    const raw = [...line].filter((character) => unprintable.test(character))
    assert.deepEqual(raw.map(codePoint), [], "printed raw")
  }
}

/** Stores a key as the store takes it, unchecked: a label kept from before a rule about labels. */
const storeDirectly = (storage: string, key: { id: string; label: string }) =>
  Effect.runPromise(
    Effect.provide(
      Effect.flatMap(ApiKeyStore, (store) => store.create({ ...key, hash: sha256(key.id) })),
      apiKeyStoreLayer({ kind: "sqlite", filename: storage.slice("file:".length) }),
    ),
  )

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

  for (const [what, label] of [
    ["a right-to-left override (U+202E)", "\u202eevil"],
    ["an ANSI colour sequence (ESC)", "\x1b[31mred"],
    ["a C1 control (U+0085, next line)", "a\u0085b"],
    ["DEL", "a\x7fb"],
    ["a tab, as a label is one line", "a\tb"],
    ["a first-strong isolate (U+2068)", "a\u2068b"],
  ] as const) {
    it(`create refuses a label with ${what}, in one paragraph, and stores nothing`, async () => {
      const storage = freshStorage()
      const result = await runKeysCli(["create", "--label", label], storage)
      assert.equal(result.code, 1)
      assert.doesNotMatch(result.stdout, /pst_/)
      assert.match(
        result.stderr,
        /^a label may not hold (control|bidirectional formatting) characters [^\n]+\n+$/,
      )
      assertPrintable(result.stderr)
      assert.equal((await runKeysCli(["list"], storage)).stdout, "No API key is stored.\n")
    })
  }

  it("create accepts a label of any other Unicode text, and list shows it as it is", async () => {
    const storage = freshStorage()
    const label = "Équipe 東京 🐕"
    const created = await runKeysCli(["create", "--label", label], storage)
    assert.equal(created.code, 0, created.stderr)
    assert.ok(created.stdout.includes(`("${label}")`), created.stdout)
    const id = createdId(created)
    const listed = await runKeysCli(["list"], storage)
    assert.ok(listed.stdout.includes(`${id}  ${label}  `), listed.stdout)
  })

  it("list and revoke show a key stored before the rule with its control and bidirectional characters escaped", async () => {
    const storage = freshStorage()
    const id = "key_\u202e00000000000000aa"
    await storeDirectly(storage, { id, label: "\u202eevil\x1b[31m\u0085\x7f\tx\ny" })
    const listed = await runKeysCli(["list"], storage)
    assert.equal(listed.code, 0, listed.stderr)
    assertPrintable(listed.stdout)
    const escapedId = String.raw`key_\u202e00000000000000aa`
    const escapedLabel = String.raw`\u202eevil\u001b[31m\u0085\u007f\u0009x\u000ay`
    assert.ok(listed.stdout.includes(`\n${escapedId}  ${escapedLabel}  `), listed.stdout)
    const revoked = await runKeysCli(["revoke", id], storage)
    assert.equal(revoked.code, 0, revoked.stderr)
    assertPrintable(revoked.stdout)
    assert.ok(revoked.stdout.startsWith(`Revoked API key ${escapedId}:`), revoked.stdout)
  })

  it("revoke names an unknown id with its control and bidirectional characters escaped", async () => {
    const result = await runKeysCli(["revoke", "key_\u202e\x1b[2J\u0085"], freshStorage())
    assert.equal(result.code, 1)
    assertPrintable(result.stderr)
    assert.ok(result.stderr.includes(String.raw`"key_\u202e\u001b[2J\u0085"`), result.stderr)
  })

  it("echoes a bad command line with its control and bidirectional characters escaped", async () => {
    const result = await runKeysCli(["list", "\u202e\x1b[2Jextra"], freshStorage())
    assert.equal(result.code, 1)
    assertPrintable(result.stderr)
    assert.ok(result.stderr.includes(String.raw`\u202e\u001b[2Jextra`), result.stderr)
  })

  it("refuses memory storage, pointing at PETSTORE_API_KEYS", async () => {
    for (const command of [["create", "--label", "x"], ["list"]]) {
      const result = await runKeysCli(command, "memory")
      assert.equal(result.code, 1)
      assert.equal(result.stdout, "")
      assert.match(result.stderr, /PETSTORE_STORAGE is memory.*PETSTORE_API_KEYS/)
    }
  })

  it("says a frozen store is frozen and what thaws it, rather than that it cannot be opened", async () => {
    const storage = `file:${path.join(directory, "frozen.db")}`
    assert.equal((await runKeysCli(["create", "--label", "before"], storage)).code, 0)
    assert.equal((await runStorageCli(["freeze"], storage)).code, 0)
    const refused = await runKeysCli(["create", "--label", "during"], storage)
    assert.equal(refused.code, 1)
    assert.equal(refused.stdout, "")
    assert.match(
      refused.stderr,
      /^petstore keys: SQLite file .*frozen\.db is frozen: .*npm run storage -- thaw/,
    )
    assert.doesNotMatch(refused.stderr, /cannot open storage|\n./)
    assert.equal((await runKeysCli(["list"], storage)).code, 0)
    assert.equal((await runStorageCli(["thaw"], storage)).code, 0)
    assert.equal((await runKeysCli(["create", "--label", "after"], storage)).code, 0)
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
