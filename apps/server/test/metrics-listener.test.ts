import assert from "node:assert/strict"
import type { Server } from "node:http"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { MemoryPetRepository } from "@petstore/storage"
import { Either, ManagedRuntime, Option } from "effect"
import {
  createApp,
  silentLogger,
  metricsExposition,
  createMetrics,
  type Metrics,
} from "@petstore/http"
import { readConfig } from "../src/config.js"
import { serveMetrics } from "@petstore/http/node"
import { closeGracefully, createServer, listen } from "@petstore/http/node"
import { shutdown } from "../src/server/shutdown.js"
import { apiKey, assertError, postJson } from "./harness.js"
import { parseLogLine } from "./log-capture.js"
import { parseExposition, sampleValue } from "./prometheus-text.js"
import { processTestTimeout, startServerProcess } from "./server-process.js"
import { openRaw, type RawConnection } from "./edge-harness.js"
import { exchange } from "./raw-exchange.js"

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

describe("shutdown, given the metrics port's server", () => {
  it("closes it with the API's", async () => {
    const api = createServer((_request, response) => response.end())
    await listen(api, 0, "127.0.0.1")
    const metrics = await serveMetrics(
      metricsExposition(createMetrics({ processMetrics: false }).registry),
      0,
      "127.0.0.1",
    )
    const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
    const code = await shutdown({
      server: api,
      metricsServer: metrics.server,
      runtime,
      logger: silentLogger,
      graceMs: 1_000,
      disposeMs: 1_000,
    })
    assert.equal(code, 0)
    assert.equal(api.listening, false)
    assert.equal(metrics.server.listening, false)
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

describe("PETSTORE_METRICS_PORT", () => {
  const read = (env: Readonly<Record<string, string>>) =>
    Either.map(readConfig(env), (config) => config.metricsPort)

  it("is a port, unset by default, and refused with metrics off", () => {
    assert.deepEqual(read({}), Either.right(Option.none()))
    assert.deepEqual(read({ PETSTORE_METRICS_PORT: "9464" }), Either.right(Option.some(9464)))
    const invalid = read({ PETSTORE_METRICS_PORT: "metrics" })
    assert.ok(Either.isLeft(invalid))
    assert.match(invalid.left.join("\n"), /PETSTORE_METRICS_PORT must be an integer from 0/)
    const contradiction = read({ PETSTORE_METRICS_PORT: "9464", PETSTORE_METRICS: "off" })
    assert.ok(Either.isLeft(contradiction))
    assert.match(
      contradiction.left.join("\n"),
      /PETSTORE_METRICS_PORT is set but PETSTORE_METRICS is off/,
    )
  })

  it(
    "moves /metrics off the API's port to its own, which serves it alone and closes at shutdown",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({
        storage: "memory",
        env: { PETSTORE_METRICS_PORT: "0" },
      })
      let metricsUrl = ""
      try {
        const started = server
          .stdout()
          .split("\n")
          .find((line) => line.includes("petstore listening"))
        const logged = parseLogLine(started ?? "{}")["metrics"]
        assert.ok(typeof logged === "string", started)
        metricsUrl = logged
        assert.notEqual(new URL(metricsUrl).origin, server.origin)

        assert.equal((await fetch(`${server.origin}/metrics`)).status, 401)
        assert.equal((await server.request("/metrics")).status, 404)
        assert.equal(
          (await server.api("/pets", postJson({ name: "Rex", categoryId: 1 }))).status,
          201,
        )

        const scraped = performance.now()
        const first = await (await fetch(metricsUrl)).text()
        assert.equal(
          sampleValue(parseExposition(first), `${duration}_count`, {
            operation: "createPet",
            status: "201",
          }),
          1,
        )
        assert.equal((await server.api("/pets")).status, 200)
        const second = await (await fetch(metricsUrl)).text()
        // Within the second the server reuses a rendering for; only a very slow machine misses it.
        if (performance.now() - scraped < 900) assert.equal(second, first)
        await sleep(1_100)
        assert.equal(listings(await (await fetch(metricsUrl)).text()), 1)

        await assertError(await fetch(new URL("/healthz", metricsUrl)), 404, "not_found")
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null })
      }
      await assert.rejects(fetch(metricsUrl), "the metrics port is closed")
    },
  )
})

describe("the metrics port under a flood of idle connections", () => {
  it(
    "keeps serving scrapes: each address holds at most 8, idle ones are dropped within 3 s, and every refusal is logged and counted",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({
        storage: "memory",
        env: { PETSTORE_METRICS_PORT: "0" },
      })
      const held: Array<RawConnection> = []
      try {
        const started = server
          .stdout()
          .split("\n")
          .find((line) => line.includes("petstore listening"))
        const metricsUrl = String(parseLogLine(started ?? "{}")["metrics"])
        const metricsOrigin = new URL(metricsUrl).origin
        const scrape = (from: string) =>
          exchange(metricsOrigin, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", {
            head: false,
            timeoutMs: 1_000,
            from,
          })

        for (let count = 0; count < 70; count++) {
          held.push(await openRaw(metricsOrigin, { from: "127.0.0.2" }))
        }
        // Those refused at accept hold a place in the global cap until their close is seen.
        await sleep(200)
        const other = await scrape("127.0.0.3")
        assert.equal(other.kind === "answered" ? other.response.status : other.kind, 200)
        assert.equal((await scrape("127.0.0.2")).kind, "closed")

        // The idle connections are dropped once they miss the 2 s header timeout.
        const closed = await Promise.all(
          held.map((connection) =>
            Promise.race([connection.closed, sleep(5_000, "open", { ref: false })]),
          ),
        )
        assert.ok(!closed.includes("open"), "an idle connection was kept past 5 s")
        const again = await scrape("127.0.0.2")
        assert.equal(again.kind === "answered" ? again.response.status : again.kind, 200)

        const refusals = server
          .stdout()
          .split("\n")
          .filter((line) => line.includes('"refused"'))
          .map(parseLogLine)
        const atAccept = refusals.filter(
          (line) =>
            line["reason"] === "address_connection_limit" && line["address"] === "127.0.0.2",
        )
        // 62 of the 70, and the scrape made while the 8 were held.
        assert.equal(atAccept.length, 63)
        assert.ok(refusals.every((line) => line["listener"] === "metrics"))
        const exposition = parseExposition(await (await fetch(metricsUrl)).text())
        assert.equal(
          sampleValue(exposition, "petstore_http_refusals_total", {
            status: "none",
            reason: "address_connection_limit",
          }),
          63,
        )
      } finally {
        held.forEach((connection) => connection.socket.destroy())
        await server.stop()
      }
    },
  )
})
