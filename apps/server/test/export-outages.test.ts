import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { exportOutages, outageWarningIntervalMs } from "../src/tracing/export-outages.js"
import { captureLogs } from "./log-capture.js"

const endpoint = "http://collector.internal:4318/v1/traces"

/** The reporter on a clock the test moves, and the lines it wrote. */
const reporter = () => {
  let now = 1_000_000
  const { logger, lines } = captureLogs()
  const outages = exportOutages(logger, endpoint, () => now)
  return {
    outages,
    advance: (ms: number) => (now += ms),
    said: () => lines().map((line) => [line["level"], line["message"]]),
  }
}

describe("exportOutages", () => {
  it("warns once when exports start failing, at most once a minute while they go on", () => {
    const { outages, advance, said } = reporter()
    outages.failed(new Error("connect ECONNREFUSED 127.0.0.1:4318"))
    for (let i = 0; i < 100; i++) {
      advance(500)
      outages.failed(new Error("Request timed out"))
    }
    assert.equal(said().length, 1)
    advance(outageWarningIntervalMs - 50_000 - 1)
    outages.failed(new Error("Request timed out"))
    assert.equal(said().length, 1)
    advance(1)
    outages.failed(new Error("Request timed out"))
    assert.equal(said().length, 2)
    assert.ok(said().every(([level]) => level === "warn"))
  })

  it("names the endpoint and the cause", () => {
    const { logger, lines } = captureLogs()
    exportOutages(logger, endpoint).failed(new Error("connect ECONNREFUSED 127.0.0.1:4318"))
    const [line] = lines()
    assert.equal(line?.["endpoint"], endpoint)
    assert.equal(line?.["cause"], "connect ECONNREFUSED 127.0.0.1:4318")
    assert.match(String(line?.["message"]), /spans are dropped until the collector answers/)
  })

  it("says once that exports succeed again, and nothing while they always did", () => {
    const { outages, advance, said } = reporter()
    outages.succeeded()
    assert.deepEqual(said(), [])
    outages.failed(new Error("503"))
    advance(1_000)
    outages.succeeded()
    outages.succeeded()
    assert.deepEqual(said(), [
      ["warn", said()[0]?.[1]],
      ["info", "traces are exported again"],
    ])
    // Failing again within the minute of the last warning: no second warning yet.
    advance(1_000)
    outages.failed(new Error("503"))
    assert.equal(said().length, 2)
  })
})
