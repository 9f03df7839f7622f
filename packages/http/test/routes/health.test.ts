import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { ManagedRuntime } from "effect"
import { createApp } from "../../src/index.js"
import { closeGracefully, createServer, listen } from "../../src/node/index.js"
import { countingStore } from "../harness/counting-store.js"

const apiKey = "health-test-key-0123456789"

/** The app on a server of its own, with a `stopping` signal and storage that counts its reads. */
const startStoppable = async () => {
  const stopping = new AbortController()
  const store = countingStore()
  const counting = store.layer
  const runtime = ManagedRuntime.make(counting)
  const server = createServer(createApp({ runtime, apiKeys: [apiKey], stopping: stopping.signal }))
  const origin = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`
  return {
    origin,
    stopping,
    reads: store.lists,
    close: async () => {
      await closeGracefully(server, 1_000)
      await runtime.dispose()
    },
  }
}

describe("GET /readyz while the process shuts down", () => {
  it("is 503 shutting_down with the Error body once `stopping` is aborted, storage unasked, while everything else is served", async () => {
    const server = await startStoppable()
    try {
      assert.equal((await fetch(`${server.origin}/readyz`)).status, 200)
      server.stopping.abort()
      const readsBefore = server.reads()
      const response = await fetch(`${server.origin}/readyz`)
      const message = await assertError(response, 503, "shutting_down")
      assert.match(message, /shutting down/)
      assert.equal(response.headers.get("retry-after"), "1")
      assert.equal(response.headers.get("cache-control"), "no-store")
      assert.equal(server.reads(), readsBefore, "storage was asked")
      assert.equal((await fetch(`${server.origin}/healthz`)).status, 200)
      const listed = await fetch(`${server.origin}/v1/pets`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      })
      assert.equal(listed.status, 200)
    } finally {
      await server.close()
    }
  })
})
