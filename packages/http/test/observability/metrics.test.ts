import assert from "node:assert/strict"
import { randomBytes } from "node:crypto"
import { after, before, describe, it } from "node:test"
import { StorageUnavailable } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { failingRepository } from "@petstore/storage/testing"
import {
  parseExposition,
  sampleValue,
  samplesNamed,
  scrape,
  type Sample,
} from "@petstore/test-support/prometheus-text"
import { postJson } from "@petstore/test-support/requests"
import { Effect, ManagedRuntime } from "effect"
import { createApp } from "../../src/index.js"
import { closeGracefully, createServer, listen } from "../../src/node/index.js"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

const duration = "petstore_http_request_duration_seconds"

const withKey = { headers: { Authorization: `Bearer ${apiKey}` } }

/** The distinct values the request histogram's `operation` label has taken. */
const operationLabels = (samples: ReadonlyArray<Sample>) =>
  new Set(samplesNamed(samples, `${duration}_count`).map((sample) => sample.labels["operation"]))

describe("GET /metrics", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("answers the Prometheus text format without a key, with Node's process metrics", async () => {
    const response = await fetch(`${server.origin}/metrics`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
    assert.equal(response.headers.get("cache-control"), "no-store")
    const text = await response.text()
    const samples = parseExposition(text)
    for (const name of [
      "process_cpu_user_seconds_total",
      "process_resident_memory_bytes",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_seconds",
    ]) {
      assert.ok(sampleValue(samples, name) !== undefined, `${name} is missing`)
    }
    for (const [name, type] of [
      [duration, "histogram"],
      ["petstore_storage_errors_total", "counter"],
      ["petstore_rate_limit_refusals_total", "counter"],
      ["petstore_group_commit_batch_size", "histogram"],
    ]) {
      assert.match(text, new RegExp(`^# TYPE ${name} ${type}$`, "m"))
      assert.match(text, new RegExp(`^# HELP ${name} .+$`, "m"))
    }
  })

  it("times each request by operation id and status", async () => {
    assert.equal((await server.api("/pets")).status, 200)
    assert.equal((await server.api("/pets", postJson({ name: "Rex", categoryId: 1 }))).status, 201)
    assert.equal((await server.api("/pets/987654")).status, 404)
    assert.equal((await server.api("/pets/987654", { headers: { Authorization: "" } })).status, 401)
    const samples = await scrape(server.origin)
    const count = (operation: string, status: string) =>
      sampleValue(samples, `${duration}_count`, { operation, status })
    assert.equal(count("listPets", "200"), 1)
    assert.equal(count("createPet", "201"), 1)
    assert.equal(count("getPet", "404"), 1)
    assert.equal(count("getPet", "401"), 1)
    const buckets = samplesNamed(samples, `${duration}_bucket`).filter(
      (sample) => sample.labels["operation"] === "listPets",
    )
    assert.ok(buckets.length > 5)
    assert.deepEqual(
      buckets.map((sample) => sample.value),
      buckets.map((sample) => sample.value).sort((a, b) => a - b),
      "cumulative buckets",
    )
    assert.equal(buckets.at(-1)?.labels["le"], "+Inf")
    assert.equal(buckets.at(-1)?.value, 1)
  })

  it("never labels a request by its path: 300 random paths add a handful of series at most", async () => {
    const before = operationLabels(await scrape(server.origin))
    const tokens = Array.from({ length: 100 }, () => randomBytes(6).toString("hex"))
    for (const token of tokens) {
      await (await fetch(`${server.origin}/${token}`)).arrayBuffer()
      await (await fetch(`${server.origin}/v1/${token}/x`, withKey)).arrayBuffer()
      await (await fetch(`${server.origin}/v1/pets/${token}`, withKey)).arrayBuffer()
    }
    const text = await (await fetch(`${server.origin}/metrics`)).text()
    for (const token of tokens) assert.ok(!text.includes(token), `${token} became a label`)
    const labels = operationLabels(parseExposition(text))
    assert.deepEqual([...labels].filter((label) => !before.has(label)).sort(), ["unmatched"])
    assert.ok(labels.size <= 6, [...labels].join(", "))
  })
})

describe("what storage does", () => {
  it("counts the requests storage could not answer, by operation, and failed readiness probes", async () => {
    const server = await startServer({
      layer: failingRepository(Effect.fail(new StorageUnavailable({ cause: new Error("gone") }))),
    })
    try {
      assert.equal((await server.api("/pets")).status, 503)
      assert.equal((await server.api("/pets")).status, 503)
      assert.equal((await server.api("/pets/1")).status, 503)
      assert.equal((await fetch(`${server.origin}/readyz`)).status, 503)
      const samples = await scrape(server.origin)
      const errors = (operation: string) =>
        sampleValue(samples, "petstore_storage_errors_total", { operation })
      assert.equal(errors("listPets"), 2)
      assert.equal(errors("getPet"), 1)
      assert.equal(errors("readyz"), 1)
      assert.equal(
        sampleValue(samples, `${duration}_count`, { operation: "listPets", status: "503" }),
        2,
      )
    } finally {
      await server.close()
    }
  })
})

describe("rate-limit refusals", () => {
  it("are counted by scope: a key over its rate, an address failing authentication", async () => {
    const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
    const app = createApp({
      runtime,
      apiKeys: [apiKey],
      limits: {
        perKey: { capacity: 2, windowSeconds: 3600 },
        failedAuthPerAddress: { capacity: 1, windowSeconds: 3600 },
      },
    })
    const server = createServer(app)
    const origin = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`
    try {
      const statuses = []
      for (let index = 0; index < 3; index += 1) {
        statuses.push((await fetch(`${origin}/v1/pets`, withKey)).status)
      }
      const wrongKey = { headers: { Authorization: "Bearer wrong-key" } }
      for (let index = 0; index < 2; index += 1) {
        statuses.push((await fetch(`${origin}/v1/pets`, wrongKey)).status)
      }
      assert.deepEqual(statuses, [200, 200, 429, 401, 429])
      const samples = await scrape(origin)
      const refusals = (scope: string) =>
        sampleValue(samples, "petstore_rate_limit_refusals_total", { scope })
      assert.equal(refusals("key"), 1)
      assert.equal(refusals("address"), 1)
    } finally {
      await closeGracefully(server, 1_000)
      await runtime.dispose()
    }
  })
})

describe("with metrics off", () => {
  it("GET /metrics is an unknown path: 401 without a key, 404 with one", async () => {
    const server = await startServer({ metrics: false })
    try {
      assert.equal((await fetch(`${server.origin}/metrics`)).status, 401)
      assert.equal((await fetch(`${server.origin}/metrics`, withKey)).status, 404)
      assert.equal((await server.api("/pets")).status, 200)
    } finally {
      await server.close()
    }
  })
})
