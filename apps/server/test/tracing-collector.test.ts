import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { performance } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { startOtlpReceiver } from "./otlp-receiver.js"
import type { RunningServer } from "./server-process.js"
import {
  createPetRequest,
  eventually,
  hangingCollector,
  newCaller,
  startTracedServer,
} from "./tracing-harness.js"

// A collector that is down or hangs costs the requests nothing, memory a bounded queue and the
// log one warning; a SIGTERM sends the spans still waiting before the process exits.

const processTimeout = { timeout: 30_000 }

/** The spans each request makes on the in-memory store: server, use case, repository. */
const spansPerRequest = 3
const exportTimeoutMs = 1_000
const queueSize = 64

/** Batches of at most the queue, every 50 ms, each given up after `exportTimeoutMs`. */
const boundedQueue = {
  OTEL_BSP_MAX_QUEUE_SIZE: String(queueSize),
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(queueSize),
  OTEL_BSP_SCHEDULE_DELAY: "50",
  OTEL_EXPORTER_OTLP_TIMEOUT: String(exportTimeoutMs),
  OTEL_BSP_EXPORT_TIMEOUT: String(exportTimeoutMs),
  // The load below is one key's, faster than its default limit.
  PETSTORE_RATE_LIMIT: "off",
}

const warningsOf = (server: RunningServer) =>
  server
    .stderr()
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map(parseLogLine)
    .filter((line) => line["level"] === "warn" && String(line["message"]).startsWith("traces "))

/** `clients` clients listing pets one request after another for `ms`: each request's latency. */
const load = async (server: RunningServer, ms: number, clients = 8) => {
  const latencies: Array<number> = []
  const failures: Array<number> = []
  const deadline = Date.now() + ms
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < deadline) {
        const started = performance.now()
        const response = await server.api("/pets?limit=5")
        await response.arrayBuffer()
        latencies.push(performance.now() - started)
        if (response.status !== 200) failures.push(response.status)
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  const at = (share: number) => latencies[Math.floor((latencies.length - 1) * share)] ?? 0
  return { count: latencies.length, failures, median: at(0.5), max: at(1) }
}

/** A port nothing listens on: a receiver's, once closed. */
const closedPort = async (): Promise<string> => {
  const receiver = await startOtlpReceiver()
  await receiver.close()
  return receiver.url
}

describe("tracing with the collector down", () => {
  it(
    "a collector that never answers: requests keep their latency, spans past the queue are dropped, one warning",
    processTimeout,
    async () => {
      const receiver = await startOtlpReceiver()
      const collector = await hangingCollector(receiver)
      const server = await startTracedServer("memory", receiver, {
        ...boundedQueue,
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      })
      try {
        const loaded = await load(server, 5_000)
        assert.deepEqual(loaded.failures, [])
        // A request that waited for an export would take the export's timeout at least.
        assert.ok(loaded.max < exportTimeoutMs, `a request took ${loaded.max.toFixed(0)} ms`)
        assert.ok(loaded.median < 100, `median ${loaded.median.toFixed(1)} ms`)
        // Every export failed; one line said so.
        assert.equal(warningsOf(server).length, 1, server.stderr())
        assert.match(String(warningsOf(server)[0]?.["cause"]), /timeout|timed out/i)
        assert.deepEqual(receiver.requests(), [])

        // Once it answers, what the processor still holds arrives: a queue's worth at most, of
        // the thousands of spans made; the rest were dropped, not kept.
        collector.recover()
        await eventually(
          () => /"message":"traces are exported again"/.test(server.stdout()),
          5_000,
          "the collector answering again",
        )
        await sleep(500)
        const received = receiver.spans().length
        assert.ok(received > 0)
        assert.ok(
          received <= queueSize,
          `${received} spans of ${loaded.count * spansPerRequest} were held`,
        )
        assert.equal(warningsOf(server).length, 1, server.stderr())
      } finally {
        await server.stop()
        await collector.close()
        await receiver.close()
      }
    },
  )

  it(
    "a collector that is not there: requests are answered, one warning for many failed exports",
    processTimeout,
    async () => {
      const url = await closedPort()
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer("memory", receiver, {
        ...boundedQueue,
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
      })
      try {
        // Thousands of spans, exported (and refused) batch after batch.
        const loaded = await load(server, 4_000)
        assert.deepEqual(loaded.failures, [])
        assert.ok(loaded.max < exportTimeoutMs, `a request took ${loaded.max.toFixed(0)} ms`)
        const warnings = warningsOf(server)
        assert.equal(warnings.length, 1, server.stderr())
        assert.match(String(warnings[0]?.["cause"]), /ECONNREFUSED/)
        assert.equal(warnings[0]?.["endpoint"], `${url}/v1/traces`)
      } finally {
        await server.stop()
        await receiver.close()
      }
      assert.deepEqual(receiver.requests(), [])
    },
  )
})

describe("tracing at shutdown", () => {
  it(
    "SIGTERM exports the spans still waiting before the process exits",
    processTimeout,
    async () => {
      const receiver = await startOtlpReceiver()
      // No export would happen for a minute.
      const server = await startTracedServer("memory", receiver, {
        OTEL_BSP_SCHEDULE_DELAY: "60000",
      })
      const callers = [newCaller(), newCaller(), newCaller()]
      for (const caller of callers) {
        const response = await server.api(
          "/pets",
          createPetRequest("Rex", { traceparent: caller.traceparent }),
        )
        assert.equal(response.status, 201)
      }
      await sleep(300)
      assert.deepEqual(receiver.requests(), [])
      assert.deepEqual(await server.stop(), { code: 0, signal: null })
      try {
        for (const caller of callers) {
          const spans = receiver.spans().filter((span) => span.traceId === caller.traceId)
          assert.deepEqual(spans.map((span) => span.name).sort(), [
            "POST /v1/pets",
            "PetRepository.create",
            "createPet",
          ])
        }
      } finally {
        await receiver.close()
      }
    },
  )

  it(
    "a collector that hangs at shutdown delays the exit by the storage's deadline at most, and it is still 0",
    processTimeout,
    async () => {
      const receiver = await startOtlpReceiver({ answer: "hang" })
      // The exporter would wait 10 s (its default) for the collector.
      const server = await startTracedServer("memory", receiver, {
        OTEL_BSP_SCHEDULE_DELAY: "60000",
      })
      try {
        assert.equal((await server.api("/pets")).status, 200)
        const signalled = Date.now()
        assert.deepEqual(await server.stop(), { code: 0, signal: null })
        const tookMs = Date.now() - signalled
        assert.ok(tookMs < 7_000, `exited after ${tookMs} ms`)
        assert.equal(receiver.requests().length, 1)
        assert.match(server.stderr(), /"message":"the last spans were not all exported"/)
        assert.match(server.stdout(), /"message":"stopped"/)
      } finally {
        await receiver.close()
      }
    },
  )
})
