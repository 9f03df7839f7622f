import assert from "node:assert/strict"
import type { Server } from "node:http"
import { describe, it } from "node:test"
import { MemoryPetRepository } from "@petstore/storage"
import { ManagedRuntime } from "effect"
import { assertError } from "@petstore/test-support/error-body"
import { parseExposition, sampleValue } from "@petstore/test-support/prometheus-text"
import { createApp, createMetrics, metricsExposition, type Metrics } from "../../src/index.js"
import { closeGracefully, createServer, listen, serveMetrics } from "../../src/node/index.js"
import { apiKey } from "../harness/server.js"

const withKey = { headers: { Authorization: `Bearer ${apiKey}` } }
const duration = "petstore_http_request_duration_seconds"

const listings = (text: string) =>
  sampleValue(parseExposition(text), `${duration}_count`, { operation: "listPets", status: "200" })

const originOf = async (server: Server) =>
  `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`

/** The app on an ephemeral port, with `metrics` and the route options given. */
const startApp = async (
  metrics: Metrics,
  options: { readonly metricsRoute?: boolean; readonly metricsReuseMs?: number },
) => {
  const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
  const server = createServer(
    createApp({ runtime, apiKeys: [apiKey], metrics, ...options }).callback(),
  )
  return {
    origin: await originOf(server),
    close: async () => {
      await closeGracefully(server, 1_000)
      await runtime.dispose()
    },
  }
}

const startMetricsPort = async (metrics: Metrics) => {
  const { server, port } = await serveMetrics(metricsExposition(metrics.registry), 0, "127.0.0.1")
  return { origin: `http://127.0.0.1:${port}`, close: () => closeGracefully(server, 1_000) }
}

describe("an app whose metrics another listener serves (metricsRoute: false)", () => {
  it("does not serve /metrics, an unknown path (401, 404), yet records what it answers", async () => {
    const metrics = createMetrics({ processMetrics: false })
    const app = await startApp(metrics, { metricsRoute: false })
    try {
      assert.equal((await fetch(`${app.origin}/metrics`)).status, 401)
      await assertError(await fetch(`${app.origin}/metrics`, withKey), 404, "not_found")
      assert.equal((await fetch(`${app.origin}/v1/pets`, withKey)).status, 200)
      assert.equal(listings(await metrics.registry.metrics()), 1)
    } finally {
      await app.close()
    }
  })
})

describe("the metrics listener", () => {
  it("serves GET and HEAD /metrics: the exposition, without a key, not cached by clients", async () => {
    const metrics = createMetrics({ processMetrics: false })
    metrics.observeRequest("listPets", 200, 0.001)
    const port = await startMetricsPort(metrics)
    try {
      const response = await fetch(`${port.origin}/metrics`)
      assert.equal(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
      assert.equal(response.headers.get("cache-control"), "no-store")
      assert.equal(listings(await response.text()), 1)
      const head = await fetch(`${port.origin}/metrics`, { method: "HEAD" })
      assert.equal(head.status, 200)
      assert.equal(await head.text(), "")
      assert.equal((await fetch(`${port.origin}/metrics?debug=1`)).status, 200)
    } finally {
      await port.close()
    }
  })

  it("answers anything else with the Error body: 404 for another path, 405 for another method", async () => {
    const port = await startMetricsPort(createMetrics({ processMetrics: false }))
    try {
      for (const path of ["/healthz", "/v1/pets", "/", "/metrics/", "/Metrics"]) {
        await assertError(await fetch(`${port.origin}${path}`, withKey), 404, "not_found")
      }
      const post = await fetch(`${port.origin}/metrics`, { method: "POST", body: "x" })
      assert.equal(post.headers.get("allow"), "GET, HEAD")
      await assertError(post, 405, "method_not_allowed")
    } finally {
      await port.close()
    }
  })
})

describe("metricsReuseMs", () => {
  it("serves one rendering again for that long, though requests were counted meanwhile", async () => {
    const metrics = createMetrics({ processMetrics: false })
    const app = await startApp(metrics, { metricsReuseMs: 60_000 })
    try {
      const first = await (await fetch(`${app.origin}/metrics`)).text()
      assert.equal((await fetch(`${app.origin}/v1/pets`, withKey)).status, 200)
      const second = await (await fetch(`${app.origin}/metrics`)).text()
      assert.equal(second, first)
      assert.equal(listings(await metrics.registry.metrics()), 1)
    } finally {
      await app.close()
    }
  })
})
