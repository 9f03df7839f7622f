import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import Database from "better-sqlite3"
import { postJson } from "@petstore/test-support/requests"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

/**
 * Another process's lock on the SQLite file (an operator's `sqlite3` session in `BEGIN
 * EXCLUSIVE`, a backup tool) never freezes the server: better-sqlite3 waits for a lock
 * synchronously, so the server never asks it to wait; it retries off the event loop instead.
 * While the lock is held, `/healthz` and reads answer in their usual time, and a create waits
 * (then succeeds once the lock is released) or, past its wait, gets 503 with `Retry-After`.
 */

const directory = mkdtempSync(path.join(tmpdir(), "petstore-outside-lock-"))
after(() => rmSync(directory, { recursive: true, force: true }))

/** How long an answer that does not wait for the lock may take on a loaded machine. */
const prompt = 1_000

const timed = async (request: () => Promise<Response>) => {
  const started = performance.now()
  const response = await request()
  await response.arrayBuffer()
  return { status: response.status, headers: response.headers, ms: performance.now() - started }
}

/** Holds `BEGIN EXCLUSIVE` on `filename` from a connection of this process for `ms`. */
const holdingLock = async <A>(filename: string, ms: number, during: () => Promise<A>) => {
  const db = new Database(filename)
  db.pragma("busy_timeout = 5000")
  db.exec("BEGIN EXCLUSIVE")
  const release = sleep(ms).then(() => {
    db.exec("COMMIT")
    db.close()
  })
  try {
    return await during()
  } finally {
    await release
  }
}

describe("an outside lock on the SQLite file", () => {
  let server: RunningServer
  const filename = path.join(directory, "petstore.db")

  it(
    "leaves /healthz and reads prompt, and a create waits for the lock and succeeds once it is released",
    { timeout: processTestTimeout },
    async () => {
      server = await startServerProcess({ storage: `file:${filename}` })
      try {
        const created = await server.api("/pets", postJson({ name: "Before", categoryId: 1 }))
        assert.equal(created.status, 201)

        const outcome = await holdingLock(filename, 2_000, async () => {
          const create = timed(() =>
            server.api("/pets", postJson({ name: "During", categoryId: 1 })),
          )
          await sleep(100)
          const health = await timed(() => fetch(`${server.origin}/healthz`))
          const read = await timed(() => server.api("/pets"))
          const one = await timed(() => server.api("/pets/1"))
          return { health, read, one, create: await create }
        })
        assert.equal(outcome.health.status, 200)
        assert.ok(outcome.health.ms < prompt, `/healthz took ${outcome.health.ms} ms`)
        assert.equal(outcome.read.status, 200)
        assert.ok(outcome.read.ms < prompt, `a list took ${outcome.read.ms} ms`)
        assert.equal(outcome.one.status, 200)
        assert.ok(outcome.one.ms < prompt, `a get took ${outcome.one.ms} ms`)
        assert.equal(outcome.create.status, 201)
        assert.ok(outcome.create.ms >= 1_500, `the create did not wait: ${outcome.create.ms} ms`)
        assert.ok(outcome.create.ms < 2_000 + prompt, `the create took ${outcome.create.ms} ms`)
      } finally {
        await server.stop()
      }
    },
  )

  it(
    "answers a create 503 with Retry-After once its wait is over, while health stays prompt",
    { timeout: processTestTimeout },
    async () => {
      server = await startServerProcess({ storage: `file:${filename}` })
      try {
        const outcome = await holdingLock(filename, 7_000, async () => {
          const create = timed(() =>
            server.api("/pets", postJson({ name: "Too late", categoryId: 1 })),
          )
          const healths = []
          for (let probe = 0; probe < 10; probe++) {
            await sleep(400)
            healths.push(await timed(() => fetch(`${server.origin}/healthz`)))
          }
          return { healths, create: await create }
        })
        for (const health of outcome.healths) {
          assert.equal(health.status, 200)
          assert.ok(health.ms < prompt, `/healthz took ${health.ms} ms`)
        }
        assert.equal(outcome.create.status, 503)
        assert.equal(outcome.create.headers.get("retry-after"), "1")
        // The store's lock wait is 5 s.
        assert.ok(outcome.create.ms >= 4_500, `it gave up after ${outcome.create.ms} ms`)
        assert.ok(outcome.create.ms < 5_000 + 2 * prompt, `it took ${outcome.create.ms} ms`)
        const after = await server.api("/pets", postJson({ name: "After", categoryId: 1 }))
        assert.equal(after.status, 201)
      } finally {
        await server.stop()
      }
    },
  )
})
