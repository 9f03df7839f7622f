import assert from "node:assert/strict"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { setTimeout as sleep } from "node:timers/promises"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { readPet } from "./harness.js"
import { attribute, spanTree, startOtlpReceiver } from "./otlp-receiver.js"
import { spawnServer, startServerProcess, type RunningServer } from "./server-process.js"
import {
  accessLine,
  assertNoneCarries,
  createPetRequest,
  missingPetId,
  newCaller,
  numberAttribute,
  serverSpanOf,
  startTracedServer,
  tracingApiKey,
  waitForTrace,
} from "./tracing-harness.js"

// The server process exporting to a real OTLP/HTTP receiver, on the in-memory store: what each
// request's trace holds, and what the standard OTEL_ variables turn on, off or refuse. The SQL
// stores' traces are in tracing-storage.test.ts, a collector that is down in
// tracing-collector.test.ts.

const directory = mkdtempSync(path.join(tmpdir(), "petstore-tracing-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const processTimeout = { timeout: 30_000 }

const listeningLine = (server: RunningServer) => {
  const line = server
    .stdout()
    .split("\n")
    .filter((text) => text.startsWith("{"))
    .map(parseLogLine)
    .find((parsed) => parsed["message"] === "petstore listening")
  assert.ok(line !== undefined)
  return line
}

const loadedModulesPreload = fileURLToPath(new URL("loaded-modules.mjs", import.meta.url))

/** The OpenTelemetry files a server process loaded from start to exit, with these variables. */
const otelModulesLoaded = async (
  env: Readonly<Record<string, string>>,
): Promise<ReadonlyArray<string>> => {
  const record = path.join(directory, `loaded-${Date.now()}-${Math.random()}.json`)
  const server = await startServerProcess({
    storage: "memory",
    apiKeys: [tracingApiKey],
    env: {
      ...env,
      NODE_OPTIONS: `--import=${loadedModulesPreload}`,
      PETSTORE_TEST_LOADED_MODULES: record,
    },
  })
  assert.equal((await server.api("/pets")).status, 200)
  assert.deepEqual(await server.stop(), { code: 0, signal: null })
  const loaded: unknown = JSON.parse(readFileSync(record, "utf8"))
  assert.ok(Array.isArray(loaded))
  return loaded.map(String)
}

/** The OpenTelemetry packages of these files but the API, which any library may use. */
const sdkPackagesOf = (files: ReadonlyArray<string>) =>
  [...new Set(files.map((file) => /node_modules\/(@opentelemetry\/[^/]+)/.exec(file)?.[1]))]
    .filter((name) => name !== "@opentelemetry/api")
    .sort()

describe("tracing on the in-memory store", () => {
  for (const protocol of ["http/protobuf", "http/json"] as const) {
    it(
      `exports one tree per request over ${protocol}: the server span, the use case, the repository`,
      processTimeout,
      async () => {
        const receiver = await startOtlpReceiver()
        const server = await startTracedServer("memory", receiver, {
          OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
        })
        try {
          // A caller's trace: the server span is its child, in its trace, keeping its tracestate.
          const caller = newCaller()
          const created = await server.api(
            "/pets",
            createPetRequest("Rex", {
              traceparent: caller.traceparent,
              tracestate: "vendor=opaque",
              "X-Request-Id": "traced-create",
            }),
          )
          assert.equal(created.status, 201)
          const pet = await readPet(created)
          const createTrace = await waitForTrace(receiver, caller.traceId, 3)
          assert.deepEqual(spanTree(createTrace, caller.traceId), [
            "POST /v1/pets",
            "  createPet",
            "    PetRepository.create",
          ])
          const createSpan = serverSpanOf(createTrace, caller.traceId)
          assert.ok(createSpan !== undefined)
          assert.equal(createSpan.parentSpanId, caller.spanId)
          assert.equal(createSpan.traceState, "vendor=opaque")
          assert.equal(createSpan.status.code, "UNSET")
          // Its access line names the trace and the server span.
          const createLine = await accessLine(server, "traced-create")
          assert.equal(createLine["trace_id"], caller.traceId)
          assert.equal(createLine["span_id"], createSpan.spanId)

          // No caller: a trace of its own, found through the access line's trace id.
          const fetched = await server.api(`/pets/${pet.id}`, {
            headers: { "User-Agent": "tracing-test/1", "X-Request-Id": "untraced-get" },
          })
          assert.equal(fetched.status, 200)
          const getTraceId = (await accessLine(server, "untraced-get"))["trace_id"]
          assert.ok(typeof getTraceId === "string" && /^[0-9a-f]{32}$/.test(getTraceId))
          assert.notEqual(getTraceId, caller.traceId)
          const getTrace = await waitForTrace(receiver, getTraceId, 3)
          assert.deepEqual(spanTree(getTrace, getTraceId), [
            "GET /v1/pets/{petId}",
            "  getPet",
            "    PetRepository.findById",
          ])
          const getSpan = serverSpanOf(getTrace, getTraceId)
          assert.ok(getSpan !== undefined)
          assert.equal(getSpan.parentSpanId, undefined)
          const port = Number(new URL(server.origin).port)
          assert.deepEqual(
            {
              method: attribute(getSpan, "http.request.method"),
              route: attribute(getSpan, "http.route"),
              status: numberAttribute(getSpan, "http.response.status_code"),
              scheme: attribute(getSpan, "url.scheme"),
              address: attribute(getSpan, "server.address"),
              port: numberAttribute(getSpan, "server.port"),
              userAgent: attribute(getSpan, "user_agent.original"),
              protocolVersion: attribute(getSpan, "network.protocol.version"),
              operation: attribute(getSpan, "petstore.operation"),
            },
            {
              method: "GET",
              route: "/v1/pets/{petId}",
              status: 200,
              scheme: "http",
              address: "127.0.0.1",
              port,
              userAgent: "tracing-test/1",
              protocolVersion: "1.1",
              operation: "getPet",
            },
          )
          assert.equal(getSpan.resource["service.name"], "petstore")
          assert.ok(typeof getSpan.resource["service.version"] === "string")

          // A 404 is the client's: the server span is no error.
          const missing = await server.api(`/pets/${missingPetId}`, {
            headers: { "X-Request-Id": "missing-get" },
          })
          assert.equal(missing.status, 404)
          const missingTraceId = String((await accessLine(server, "missing-get"))["trace_id"])
          const missingTrace = await waitForTrace(receiver, missingTraceId, 3)
          const missingSpan = serverSpanOf(missingTrace, missingTraceId)
          assert.ok(missingSpan !== undefined)
          assert.equal(missingSpan.status.code, "UNSET")
          assert.equal(numberAttribute(missingSpan, "http.response.status_code"), 404)
          assert.equal(attribute(missingSpan, "http.route"), "/v1/pets/{petId}")

          // A public route, and a path no route knows: traced, never named by the raw path.
          assert.equal((await server.request("/healthz")).status, 200)
          const unknown = await server.request(`/v1/shelves/${missingPetId}`, {
            headers: { "X-Request-Id": "unknown-path" },
          })
          assert.equal(unknown.status, 404)
          const unknownTraceId = String((await accessLine(server, "unknown-path"))["trace_id"])
          const [unknownSpan] = await waitForTrace(receiver, unknownTraceId, 1)
          assert.ok(unknownSpan !== undefined)
          assert.equal(unknownSpan.kind, "SERVER")
          assert.equal(unknownSpan.name, "GET")
          await receiver.waitForSpans((spans) =>
            spans.some((span) => span.name === "GET /healthz" && span.kind === "SERVER"),
          )

          assert.ok(
            receiver.requests().every((request) => request.contentType === contentTypes[protocol]),
            JSON.stringify(receiver.requests().map((request) => request.contentType)),
          )
          // Neither the key nor an id from a path, anywhere in any span.
          assertNoneCarries(receiver.spans(), [
            tracingApiKey,
            String(missingPetId),
            `/pets/${pet.id}`,
          ])
        } finally {
          await server.stop()
          await receiver.close()
        }
      },
    )
  }

  it(
    "a hostile traceparent or tracestate starts a trace of its own, and the request is answered as usual",
    processTimeout,
    async () => {
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer("memory", receiver)
      try {
        const caller = newCaller()
        const hostile: ReadonlyArray<[string, Headers]> = [
          ["not a traceparent", new Headers({ traceparent: "garbage" })],
          [
            "all-zero ids",
            new Headers({ traceparent: `00-${"0".repeat(32)}-${"0".repeat(16)}-01` }),
          ],
          ["version ff", new Headers({ traceparent: `ff-${caller.traceId}-${caller.spanId}-01` })],
          ["upper-case hex", new Headers({ traceparent: caller.traceparent.toUpperCase() })],
          [
            "sent twice",
            new Headers([
              ["traceparent", caller.traceparent],
              ["traceparent", newCaller().traceparent],
            ]),
          ],
        ]
        for (const [name, headers] of hostile) {
          headers.set("X-Request-Id", `hostile-${hostile.findIndex(([other]) => other === name)}`)
          headers.set("tracestate", `${"x".repeat(600)}=y,${"k=v,".repeat(100)}`)
          const answered = await server.api("/pets", { headers })
          assert.equal(answered.status, 200, name)
          const line = await accessLine(server, headers.get("X-Request-Id") ?? "")
          const traceId = line["trace_id"]
          assert.ok(typeof traceId === "string" && /^[0-9a-f]{32}$/.test(traceId), name)
          assert.notEqual(traceId, "0".repeat(32), name)
          assert.notEqual(traceId, caller.traceId, name)
          const span = serverSpanOf(await waitForTrace(receiver, traceId, 3), traceId)
          assert.ok(span !== undefined, name)
          assert.equal(span.parentSpanId, undefined, name)
          assert.equal(span.traceState, undefined, name)
        }
      } finally {
        await server.stop()
        await receiver.close()
      }
    },
  )

  it(
    "leaves to the SDK what it reads itself: service name, resource attributes, headers, the traces endpoint, the sampler",
    processTimeout,
    async () => {
      const receiver = await startOtlpReceiver()
      const headerValue = "s3cret-collector-token-7d1e"
      const server = await startTracedServer("memory", receiver, {
        // The traces endpoint wins over the general one, which leads nowhere.
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_HEADERS: `x-collector-token=${headerValue}`,
        OTEL_SERVICE_NAME: "petstore-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,service.namespace=shop",
        // New traces are never recorded; a caller's sampled decision is followed.
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0",
      })
      try {
        assert.equal(
          listeningLine(server)["tracing"],
          `OTLP http/protobuf to ${receiver.url}/v1/traces`,
        )
        assert.equal(
          (await server.api("/pets", { headers: { "X-Request-Id": "lone" } })).status,
          200,
        )
        const caller = newCaller()
        assert.equal(
          (await server.api("/pets", { headers: { traceparent: caller.traceparent } })).status,
          200,
        )
        const spans = await waitForTrace(receiver, caller.traceId, 3)
        const [span] = spans
        assert.ok(span !== undefined)
        assert.equal(span.resource["service.name"], "petstore-eu")
        assert.equal(span.resource["deployment.environment.name"], "test")
        assert.equal(span.resource["service.namespace"], "shop")
        assert.ok(
          receiver
            .requests()
            .every((request) => request.headers["x-collector-token"] === headerValue),
        )
        // Time for the unsampled request's spans, were they exported, to arrive.
        await sleep(300)
        const loneTrace = (await accessLine(server, "lone"))["trace_id"]
        assert.deepEqual(
          receiver.spans().filter((received) => received.traceId === loneTrace),
          [],
        )
        assert.deepEqual(
          [...new Set(receiver.spans().map((received) => received.traceId))],
          [caller.traceId],
        )
      } finally {
        await server.stop()
        await receiver.close()
      }
      assert.ok(
        !`${server.stdout()}${server.stderr()}`.includes(headerValue),
        "a header was logged",
      )
    },
  )
})

const contentTypes = {
  "http/protobuf": "application/x-protobuf",
  "http/json": "application/json",
} as const

describe("tracing off", () => {
  it(
    "is the default: no OpenTelemetry module is loaded, and the start-up line says so",
    processTimeout,
    async () => {
      // prom-client loads the API (a no-op without an SDK) for its exemplars, tracing or not.
      assert.deepEqual(sdkPackagesOf(await otelModulesLoaded({})), [])
      // The same check sees the SDK when tracing is on.
      const receiver = await startOtlpReceiver()
      try {
        const loaded = sdkPackagesOf(
          await otelModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }),
        )
        assert.ok(loaded.includes("@opentelemetry/sdk-trace-base"), loaded.join(", "))
        assert.ok(loaded.includes("@opentelemetry/exporter-trace-otlp-proto"), loaded.join(", "))
        assert.ok(!loaded.includes("@opentelemetry/exporter-trace-otlp-http"), loaded.join(", "))
      } finally {
        await receiver.close()
      }
      const server = await startServerProcess({ storage: "memory", apiKeys: [tracingApiKey] })
      try {
        assert.equal(listeningLine(server)["tracing"], "off")
        assert.equal(
          (await server.api("/pets", { headers: { "X-Request-Id": "off" } })).status,
          200,
        )
        assert.equal((await accessLine(server, "off"))["trace_id"], undefined)
      } finally {
        await server.stop()
      }
    },
  )

  it(
    "with OTEL_TRACES_EXPORTER=none, whatever else is set: the receiver gets nothing, even at shutdown",
    processTimeout,
    async () => {
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer("memory", receiver, {
        OTEL_TRACES_EXPORTER: "none",
        // Read only when tracing is on: not even checked here.
        OTEL_TRACES_SAMPLER: "sometimes",
      })
      try {
        assert.equal(listeningLine(server)["tracing"], "off")
        assert.equal((await server.api("/pets", createPetRequest("Rex"))).status, 201)
        assert.equal((await server.api("/pets")).status, 200)
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null })
        await receiver.close()
      }
      assert.deepEqual(receiver.requests(), [])
    },
  )

  it(
    "refuses an exporter or a protocol it does not have, naming the variable",
    processTimeout,
    async () => {
      const refusals = [
        [{ OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER must be otlp or none/],
        [
          {
            OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4317",
            OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
          },
          /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json \(OTLP over gRPC is not supported/,
        ],
      ] as const
      for (const [env, message] of refusals) {
        const server = spawnServer({ storage: "memory", apiKeys: [tracingApiKey], env })
        assert.equal((await server.exited).code, 1)
        assert.match(server.stderr(), message)
        assert.doesNotMatch(server.stderr(), /\n\s+at /)
      }
    },
  )
})
