import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { PetRepository, StorageUnavailable } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { failingRepository } from "@petstore/storage/testing"
import { PostgresPetRepository } from "@petstore/storage-postgres"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { Effect, Layer } from "effect"
import { assertError, startServer, type TestServer } from "./harness.js"

const readyz = (server: TestServer, requestId = "readyz") =>
  fetch(`${server.origin}/readyz`, { headers: { "X-Request-Id": requestId } })

/** Asks `/readyz` every 100 ms until it answers `status`; fails after `withinMs`. */
const readyzUntil = async (server: TestServer, status: number, withinMs: number) => {
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
  it("is 200 without a key when storage answers (in memory)", async () => {
    const server = await startServer()
    try {
      await assertReady(await readyz(server))
    } finally {
      await server.close()
    }
  })

  it("is 200 on an SQLite file", async () => {
    const directory = mkdtempSync(path.join(tmpdir(), "petstore-readyz-"))
    const server = await startServer({
      layer: SqlitePetRepository.layer({ filename: path.join(directory, "pets.db") }),
    })
    try {
      await assertReady(await readyz(server))
    } finally {
      await server.close()
      rmSync(directory, { recursive: true, force: true })
    }
  })

  it("is 503 with the Error body and Retry-After when storage fails, while /healthz stays 200", async () => {
    const server = await startServer({
      layer: failingRepository(
        Effect.fail(new StorageUnavailable({ cause: new Error("disk gone") })),
      ),
    })
    try {
      await assertNotReady(await readyz(server, "probe-1"))
      const health = await fetch(`${server.origin}/healthz`)
      assert.equal(health.status, 200)
      const warning = server.logLines().find((line) => line["message"] === "storage not ready")
      assert.equal(warning?.["requestId"], "probe-1")
      assert.match(String(warning?.["cause"]), /disk gone/)
    } finally {
      await server.close()
    }
  })

  it("is 503 when storage fails with a defect", async () => {
    const server = await startServer({ layer: failingRepository(Effect.die(new Error("bug"))) })
    try {
      await assertNotReady(await readyz(server))
    } finally {
      await server.close()
    }
  })

  it("asks storage at most once a second, however often and however many ask", async () => {
    let probes = 0
    const counting = Layer.effect(
      PetRepository,
      Effect.map(PetRepository, (pets) =>
        PetRepository.of({
          ...pets,
          list: (slice) =>
            Effect.zipRight(
              Effect.sync(() => (probes += 1)),
              pets.list(slice),
            ),
        }),
      ),
    ).pipe(Layer.provide(MemoryPetRepository.layer))
    const server = await startServer({ layer: counting })
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, () => readyz(server)))
      assert.ok(answers.every((response) => response.status === 200))
      for (let index = 0; index < 20; index += 1) {
        assert.equal((await readyz(server)).status, 200)
      }
      assert.equal(probes, 1)
      await sleep(1_100)
      assert.equal((await readyz(server)).status, 200)
      assert.equal(probes, 2)
    } finally {
      await server.close()
    }
  })
})

await withTemporaryPostgresDatabase("GET /readyz on PostgreSQL", (database) => {
  let server: TestServer | undefined
  after(() => server?.close())

  it(
    "turns 503 when the database is taken away and 200 again when it is back, without a restart",
    { timeout: 60_000 },
    async () => {
      server = await startServer({ layer: PostgresPetRepository.layer({ url: database.url }) })
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
