import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { StorageUnavailable } from "@petstore/core"
import { failingRepository } from "@petstore/storage/testing"
import { assertError } from "@petstore/test-support/error-body"
import { Effect } from "effect"
import { startServer, type TestServer } from "../harness/server.js"
import { countingStore } from "../harness/counting-store.js"

const readyz = (server: TestServer, requestId = "readyz") =>
  fetch(`${server.origin}/readyz`, { headers: { "X-Request-Id": requestId } })

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
    const store = countingStore()
    const server = await startServer({ layer: store.layer })
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, () => readyz(server)))
      assert.ok(answers.every((response) => response.status === 200))
      for (let index = 0; index < 20; index += 1) {
        assert.equal((await readyz(server)).status, 200)
      }
      assert.equal(store.lists(), 1)
      await sleep(1_100)
      assert.equal((await readyz(server)).status, 200)
      assert.equal(store.lists(), 2)
    } finally {
      await server.close()
    }
  })
})
