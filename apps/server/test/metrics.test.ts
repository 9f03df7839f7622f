import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { createMetrics } from "@petstore/http"
import { sampleValue, scrape } from "@petstore/test-support/prometheus-text"
import { postJson } from "@petstore/test-support/requests"
import { Either } from "effect"
import { readConfig } from "../src/settings/read-config.js"
import { startApp } from "./harness.js"
import { processTestTimeout, startServerProcess } from "./server-process.js"

// The metrics of the app on SQLite, PETSTORE_METRICS and the process's metrics; the app's own
// metrics are tested in packages/http.

const duration = "petstore_http_request_duration_seconds"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-metrics-"))
after(() => rmSync(directory, { recursive: true, force: true }))

describe("what storage does", () => {
  it("observes the size of each group commit on SQLite", async () => {
    const metrics = createMetrics({ processMetrics: false })
    const server = await startApp(
      { kind: "sqlite", filename: path.join(directory, "batches.db") },
      { storage: { groupCommit: { observeBatchSize: metrics.observeBatchSize } }, metrics },
    )
    try {
      const creates = 40
      const answers = await Promise.all(
        Array.from({ length: creates }, (_, index) =>
          server.api("/pets", postJson({ name: `Pet ${index}`, categoryId: 1 })),
        ),
      )
      assert.ok(answers.every((response) => response.status === 201))
      const samples = await scrape(server.origin)
      const batches = sampleValue(samples, "petstore_group_commit_batch_size_count") ?? 0
      assert.equal(sampleValue(samples, "petstore_group_commit_batch_size_sum"), creates)
      assert.ok(batches >= 1 && batches <= creates, `${batches} batches`)
    } finally {
      await server.close()
    }
  })
})

describe("with metrics off", () => {
  it("PETSTORE_METRICS is on unless off, and nothing else", () => {
    const metricsOf = (value: string | undefined) =>
      Either.map(readConfig({ PETSTORE_METRICS: value }), (config) => config.metrics)
    assert.deepEqual(metricsOf(undefined), Either.right(true))
    assert.deepEqual(metricsOf("on"), Either.right(true))
    assert.deepEqual(metricsOf("off"), Either.right(false))
    assert.deepEqual(metricsOf("OFF"), Either.right(false))
    const refused = metricsOf("no")
    assert.ok(Either.isLeft(refused))
    assert.match(refused.left.join("\n"), /PETSTORE_METRICS must be on or off/)
  })
})

describe("the server process's metrics", () => {
  it(
    "count the group commits of its SQLite store, and are gone with PETSTORE_METRICS=off",
    { timeout: processTestTimeout },
    async () => {
      const storage = `file:${path.join(directory, "process.db")}`
      const server = await startServerProcess({ storage })
      try {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, index) =>
            server.api("/pets", postJson({ name: `Pet ${index}`, categoryId: 2 })),
          ),
        )
        assert.ok(answers.every((response) => response.status === 201))
        const samples = await scrape(server.origin)
        assert.equal(sampleValue(samples, "petstore_group_commit_batch_size_sum"), 10)
        assert.equal(
          sampleValue(samples, `${duration}_count`, { operation: "createPet", status: "201" }),
          10,
        )
      } finally {
        await server.stop()
      }
      const off = await startServerProcess({ storage, env: { PETSTORE_METRICS: "off" } })
      try {
        assert.equal((await fetch(`${off.origin}/metrics`)).status, 401)
      } finally {
        await off.stop()
      }
    },
  )
})
