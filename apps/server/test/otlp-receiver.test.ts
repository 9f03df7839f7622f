import assert from "node:assert/strict"
import { after, before, describe, test } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  createTraceState,
  trace,
  type SpanContext,
} from "@opentelemetry/api"
import { ExportResultCode, type ExportResult } from "@opentelemetry/core"
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { OTLPTraceExporter as ProtobufTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"
import { resourceFromAttributes } from "@opentelemetry/resources"
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base"
import {
  attribute,
  childrenOf,
  spanTree,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "./otlp-receiver.js"

type Encoding = "protobuf" | "json"

const callerContext: SpanContext = {
  traceId: "0af7651916cd43dd8448eb211c80319c",
  spanId: "b7ad6b7169203331",
  traceFlags: TraceFlags.SAMPLED,
  isRemote: true,
  traceState: createTraceState("vendor=opaque"),
}
const linkedContext: SpanContext = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags: TraceFlags.SAMPLED,
}

/** A real OTLP exporter of the encoding, gzipping as `OTEL_EXPORTER_OTLP_COMPRESSION=gzip` asks. */
const exporterFor = (
  encoding: Encoding,
  receiver: OtlpReceiver,
  options: { readonly gzip?: boolean; readonly timeoutMillis?: number } = {},
): SpanExporter => {
  const previous = process.env.OTEL_EXPORTER_OTLP_COMPRESSION
  process.env.OTEL_EXPORTER_OTLP_COMPRESSION = options.gzip ? "gzip" : "none"
  try {
    const config = {
      url: `${receiver.url}/v1/traces`,
      headers: { "x-test-encoding": encoding },
      timeoutMillis: options.timeoutMillis ?? 10_000,
    }
    return encoding === "protobuf"
      ? new ProtobufTraceExporter(config)
      : new JsonTraceExporter(config)
  } finally {
    if (previous === undefined) delete process.env.OTEL_EXPORTER_OTLP_COMPRESSION
    else process.env.OTEL_EXPORTER_OTLP_COMPRESSION = previous
  }
}

/** A server span under a remote caller, and an ERROR client span under it with an event and a link. */
const emitParentAndChild = (provider: BasicTracerProvider) => {
  const tracer = provider.getTracer("otlp-receiver-test", "1.0.0")
  const parent = tracer.startSpan(
    "GET /v1/pets/{petId}",
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": "GET",
        "http.response.status_code": 500,
        "test.ratio": 0.25,
        "test.large": Number.MAX_SAFE_INTEGER,
        "test.cached": false,
        "test.tags": ["calm", "small"],
        "test.ids": [7, 8],
      },
    },
    trace.setSpanContext(ROOT_CONTEXT, callerContext),
  )
  const child = tracer.startSpan(
    "sql.execute",
    {
      kind: SpanKind.CLIENT,
      attributes: { "db.system.name": "sqlite" },
      links: [{ context: linkedContext, attributes: { "test.link": "batch" } }],
    },
    trace.setSpan(ROOT_CONTEXT, parent),
  )
  child.addEvent("exception", { "exception.message": "disk I/O error", "test.attempt": 2 })
  child.setStatus({ code: SpanStatusCode.ERROR, message: "disk I/O error" })
  child.end()
  parent.end()
}

const exportOnce = (exporter: SpanExporter, spans: ReadableSpan[]): Promise<ExportResult> =>
  new Promise((resolve) => exporter.export(spans, resolve))

const nanos = ([seconds, nanoseconds]: readonly [number, number]): bigint =>
  BigInt(seconds) * 1_000_000_000n + BigInt(nanoseconds)

const byName = (spans: ReadonlyArray<ReceivedSpan>): ReadonlyArray<ReceivedSpan> =>
  [...spans].sort((a, b) => a.name.localeCompare(b.name))

const only = (spans: ReadonlyArray<ReceivedSpan>, name: string): ReceivedSpan => {
  const found = spans.filter((span) => span.name === name)
  assert.equal(found.length, 1, `one span named ${name}`)
  const [span] = found
  assert.ok(span, name)
  return span
}

describe("spans exported by the real OTLP exporters", () => {
  const routes = [
    { key: "protobuf", encoding: "protobuf", gzip: false, contentType: "application/x-protobuf" },
    { key: "json", encoding: "json", gzip: false, contentType: "application/json" },
    {
      key: "protobuf+gzip",
      encoding: "protobuf",
      gzip: true,
      contentType: "application/x-protobuf",
    },
    { key: "json+gzip", encoding: "json", gzip: true, contentType: "application/json" },
  ] as const
  const receivers = new Map<string, OtlpReceiver>()
  const received = new Map<string, ReadonlyArray<ReceivedSpan>>()
  const recorded = new InMemorySpanExporter()
  let sdkSpans: ReadonlyArray<ReadableSpan> = []

  before(async () => {
    for (const route of routes) receivers.set(route.key, await startOtlpReceiver())
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": "otlp-receiver-test" }),
      spanProcessors: [
        new SimpleSpanProcessor(recorded),
        ...routes.map((route) => {
          const receiver = receivers.get(route.key)
          assert.ok(receiver, route.key)
          return new BatchSpanProcessor(exporterFor(route.encoding, receiver, route))
        }),
      ],
    })
    emitParentAndChild(provider)
    await provider.forceFlush()
    sdkSpans = recorded.getFinishedSpans()
    for (const [key, receiver] of receivers) {
      received.set(key, byName(await receiver.waitForSpans((spans) => spans.length >= 2)))
    }
    await provider.shutdown()
  })
  after(async () => {
    for (const receiver of receivers.values()) await receiver.close()
  })

  const spansOf = (key: string): ReadonlyArray<ReceivedSpan> => {
    const spans = received.get(key)
    assert.ok(spans, `spans through ${key}`)
    return spans
  }

  test("the protobuf encoding decodes to what the SDK recorded", () => {
    const spans = spansOf("protobuf")
    assert.equal(spans.length, 2)
    const sdkParent = sdkSpans.find((span) => span.name === "GET /v1/pets/{petId}")
    const sdkChild = sdkSpans.find((span) => span.name === "sql.execute")
    assert.ok(sdkParent && sdkChild, "the SDK recorded both spans")
    const parent = only(spans, "GET /v1/pets/{petId}")
    const child = only(spans, "sql.execute")

    assert.deepEqual(parent, {
      traceId: callerContext.traceId,
      spanId: sdkParent.spanContext().spanId,
      parentSpanId: callerContext.spanId,
      traceState: "vendor=opaque",
      name: "GET /v1/pets/{petId}",
      kind: "SERVER",
      startTimeUnixNano: nanos(sdkParent.startTime),
      endTimeUnixNano: nanos(sdkParent.endTime),
      attributes: {
        "http.request.method": "GET",
        "http.response.status_code": 500n,
        "test.ratio": 0.25,
        "test.large": BigInt(Number.MAX_SAFE_INTEGER),
        "test.cached": false,
        "test.tags": ["calm", "small"],
        "test.ids": [7n, 8n],
      },
      events: [],
      links: [],
      status: { code: "UNSET", message: undefined },
      resource: sdkParent.resource.attributes,
      scope: "otlp-receiver-test",
    })
    assert.deepEqual(child, {
      traceId: callerContext.traceId,
      spanId: sdkChild.spanContext().spanId,
      parentSpanId: parent.spanId,
      traceState: "vendor=opaque",
      name: "sql.execute",
      kind: "CLIENT",
      startTimeUnixNano: nanos(sdkChild.startTime),
      endTimeUnixNano: nanos(sdkChild.endTime),
      attributes: { "db.system.name": "sqlite" },
      events: [
        {
          name: "exception",
          timeUnixNano: nanos(sdkChild.events[0]?.time ?? [0, 0]),
          attributes: { "exception.message": "disk I/O error", "test.attempt": 2n },
        },
      ],
      links: [
        {
          traceId: linkedContext.traceId,
          spanId: linkedContext.spanId,
          attributes: { "test.link": "batch" },
        },
      ],
      status: { code: "ERROR", message: "disk I/O error" },
      resource: sdkChild.resource.attributes,
      scope: "otlp-receiver-test",
    })
    assert.equal(attribute(parent, "service.name"), undefined, "resource attributes stay apart")
    assert.equal(parent.resource["service.name"], "otlp-receiver-test")
  })

  test("the JSON encoding decodes to the same spans as the protobuf one", () => {
    assert.deepEqual(spansOf("json"), spansOf("protobuf"))
  })

  test("gzip bodies decode to the same spans, in both encodings", () => {
    assert.deepEqual(spansOf("protobuf+gzip"), spansOf("protobuf"))
    assert.deepEqual(spansOf("json+gzip"), spansOf("protobuf"))
  })

  test("each export is recorded with its media type, headers and span count", () => {
    for (const route of routes) {
      const receiver = receivers.get(route.key)
      assert.ok(receiver, route.key)
      const requests = receiver.requests()
      assert.equal(requests.length, 1, route.key)
      const [request] = requests
      assert.equal(request?.contentType, route.contentType)
      assert.equal(request?.headers["content-encoding"], route.gzip ? "gzip" : undefined)
      assert.equal(request?.headers["x-test-encoding"], route.encoding)
      assert.equal(request?.spanCount, 2)
      assert.equal(request?.error, undefined)
    }
  })

  test("childrenOf and spanTree follow parentSpanId within the trace", () => {
    const spans = spansOf("json")
    const parent = only(spans, "GET /v1/pets/{petId}")
    assert.deepEqual(
      childrenOf(spans, parent).map((span) => span.name),
      ["sql.execute"],
    )
    assert.deepEqual(spanTree(spans, callerContext.traceId), [
      "GET /v1/pets/{petId}",
      "  sql.execute",
    ])
    assert.deepEqual(spanTree(spans, linkedContext.traceId), [])
  })

  test("waitForSpans names the spans it saw when it times out", async () => {
    const receiver = receivers.get("protobuf")
    assert.ok(receiver, "the protobuf receiver")
    await assert.rejects(
      receiver.waitForSpans((spans) => spans.some((span) => span.name === "never"), 50),
      /after 50 ms; spans seen: GET \/v1\/pets\/\{petId\}, sql\.execute|spans seen: sql\.execute, GET/,
    )
  })
})

describe("a receiver that is down or broken", () => {
  const recordSpans = (): ReadableSpan[] => {
    const recorded = new InMemorySpanExporter()
    emitParentAndChild(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(recorded)] }),
    )
    return recorded.getFinishedSpans()
  }

  for (const encoding of ["protobuf", "json"] as const) {
    test(`"unavailable" answers 503, so the ${encoding} exporter reports failure`, async () => {
      const receiver = await startOtlpReceiver({ answer: "unavailable" })
      try {
        const exporter = exporterFor(encoding, receiver, { timeoutMillis: 500 })
        const result = await exportOnce(exporter, recordSpans())
        await exporter.shutdown()
        assert.equal(result.code, ExportResultCode.FAILED)
        assert.deepEqual(
          receiver.requests().map((request) => request.spanCount),
          [2],
        )
        assert.deepEqual(receiver.spans(), [], "a refused export is not received")
      } finally {
        await receiver.close()
      }
    })
  }

  test('"hang" never answers, and close() still ends at once', async () => {
    const receiver = await startOtlpReceiver({ answer: "hang" })
    const exporter = exporterFor("protobuf", receiver, { timeoutMillis: 1_000 })
    const exported = exportOnce(exporter, recordSpans())
    while (receiver.requests().length === 0) await sleep(10)
    const waiting = receiver.waitForSpans((spans) => spans.length > 0)
    const started = performance.now()
    await receiver.close()
    assert.ok(performance.now() - started < 500, "close() does not wait for the hanging export")
    await assert.rejects(waiting, /the receiver closed; spans seen: none/)
    assert.equal((await exported).code, ExportResultCode.FAILED)
    await exporter.shutdown()
  })

  test("an undecodable body is refused with 400 and recorded with its reason", async () => {
    const receiver = await startOtlpReceiver()
    try {
      const badId = await fetch(`${receiver.url}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          resourceSpans: [
            { scopeSpans: [{ spans: [{ traceId: "zz", spanId: "00f067aa0ba902b7" }] }] },
          ],
        }),
      })
      assert.equal(badId.status, 400)
      const unknownType = await fetch(`${receiver.url}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "{}",
      })
      assert.equal(unknownType.status, 415)
      assert.deepEqual(
        receiver.requests().map((request) => request.error),
        [
          "OTLP resourceSpans[0].scopeSpans[0].spans[0].traceId: expected a 16-byte id",
          "unsupported Content-Type text/plain",
        ],
      )
    } finally {
      await receiver.close()
    }
  })
})
