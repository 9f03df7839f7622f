import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { assertError } from "@petstore/test-support/error-body"
import { Redacted } from "effect"
import { startApp, type AppServer } from "./harness.js"

// /readyz on the adapters the process wires; on memory and failing storage, packages/http tests it.

const readyz = (server: AppServer, requestId = "readyz") =>
  fetch(`${server.origin}/readyz`, { headers: { "X-Request-Id": requestId } })

/** Asks `/readyz` every 100 ms until it answers `status`; fails after `withinMs`. */
const readyzUntil = async (server: AppServer, status: number, withinMs: number) => {
  const deadline = performance.now() + withinMs
  for (;;) {
    const response = await readyz(server)
    if (response.status === status) return response
    await response.arrayBuffer()
    assert.ok(
      performance.now() < deadline,
      `/readyz did not answer ${status} within ${withinMs} ms`,
    )
    await sleep(100)
  }
}

const assertReady = async (response: Response) => {
  assert.equal(response.status, 200)
  assert.deepEqual(await response.json(), { status: "ready" })
  assert.equal(response.headers.get("cache-control"), "no-store")
}

const assertNotReady = async (response: Response) => {
  await assertError(response, 503, "storage_unavailable")
  assert.equal(response.headers.get("retry-after"), "1")
  assert.equal(response.headers.get("cache-control"), "no-store")
}

describe("GET /readyz", () => {
  it("is 200 on an SQLite file", async () => {
    const directory = mkdtempSync(path.join(tmpdir(), "petstore-readyz-"))
    const server = await startApp({ kind: "sqlite", filename: path.join(directory, "pets.db") })
    try {
      await assertReady(await readyz(server))
    } finally {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    }
  })
})

await withTemporaryPostgresDatabase("GET /readyz on PostgreSQL", (database) => {
  let server: AppServer | undefined
  after(() => server?.close())

  it(
    "turns 503 when the database is taken away and 200 again when it is back, without a restart",
    { timeout: 60_000 },
    async () => {
      server = await startApp({ kind: "postgres", url: Redacted.make(database.url) })
      await assertReady(await readyz(server))
      await database.refuseConnections()
      try {
        await assertNotReady(await readyzUntil(server, 503, 15_000))
      } finally {
        await database.allowConnections()
      }
      await assertReady(await readyzUntil(server, 200, 15_000))
      assert.equal((await server.api("/pets")).status, 200)
    },
  )
})
