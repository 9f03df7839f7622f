import assert from "node:assert/strict"
import { readdir, readFile } from "node:fs/promises"
import { request } from "node:http"
import { after, before, describe, it } from "node:test"
import {
  createTraceState,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Span as OtelSpan,
  type TextMapPropagator,
  type Tracer as OtelTracer,
} from "@opentelemetry/api"
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base"
import { StorageUnavailable, type PetRepository } from "@petstore/core"
import { ApiKeyStore, MemoryPetRepository } from "@petstore/storage"
import { failingRepository } from "@petstore/storage/testing"
import {
  Cause,
  Context,
  Effect,
  Exit,
  Layer,
  ManagedRuntime,
  Option,
  Tracer as EffectTracer,
} from "effect"
import {
  createApp,
  createLogger,
  generateApiKey,
  StoredKeys,
  type AppOptions,
} from "../../src/index.js"
import { otelRequestTracing } from "../../src/observability/otel-request-tracing.js"
import {
  answerWithinMs,
  hostApp,
  mounted,
  mountPath,
  serve,
  type Served,
} from "../harness/mount.js"

const apiKey = "tracing-test-key-0123456789"
const userAgent = "tracing-test/1.0"
/** A pet id no request creates: it must not be found in any span. */
const rawId = "987654321"
const callerTraceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const callerSpanId = "00f067aa0ba902b7"

/** W3C trace context (`traceparent` version 00, `tracestate`), as the Node SDK registers it. */
const w3cTraceContext: TextMapPropagator = {
  inject: () => {},
  fields: () => ["traceparent", "tracestate"],
  extract: (context, carrier, getter) => {
    const header = getter.get(carrier, "traceparent")
    const parent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(
      (Array.isArray(header) ? header[0] : header) ?? "",
    )
    if (parent === null) return context
    const [, traceId = "", spanId = "", flags = "00"] = parent
    const state = getter.get(carrier, "tracestate")
    return trace.setSpanContext(context, {
      traceId,
      spanId,
      traceFlags: Number.parseInt(flags, 16),
      isRemote: true,
      ...(typeof state === "string" ? { traceState: createTraceState(state) } : {}),
    })
  },
}

/** Where @effect/opentelemetry reads an external parent's trace flags (sampled when absent). */
const traceFlagsTag = Context.GenericTag<TraceFlags>("@effect/opentelemetry/Tracer/OtelTraceFlags")

/**
 * An Effect span kept as an OpenTelemetry span of the same provider, a child of its parent as
 * @effect/opentelemetry makes it (the parent's trace flags read where that library reads them),
 * so that one exporter holds the request's whole tree.
 */
class BridgedSpan implements EffectTracer.Span {
  readonly _tag = "Span"
  readonly otel: OtelSpan
  readonly spanId: string
  readonly traceId: string
  readonly sampled: boolean
  readonly attributes = new Map<string, unknown>()
  status: EffectTracer.SpanStatus

  constructor(
    tracer: OtelTracer,
    readonly name: string,
    readonly parent: Option.Option<EffectTracer.AnySpan>,
    readonly context: Context.Context<never>,
    readonly links: Array<EffectTracer.SpanLink>,
    startTime: bigint,
    readonly kind: EffectTracer.SpanKind,
  ) {
    const parentContext = Option.match(parent, {
      onNone: () => ROOT_CONTEXT,
      onSome: (span) =>
        span instanceof BridgedSpan
          ? trace.setSpan(ROOT_CONTEXT, span.otel)
          : trace.setSpanContext(ROOT_CONTEXT, {
              traceId: span.traceId,
              spanId: span.spanId,
              isRemote: true,
              traceFlags: Option.getOrElse(
                Context.getOption(span.context, traceFlagsTag),
                () => TraceFlags.SAMPLED,
              ),
            }),
    })
    this.otel = tracer.startSpan(name, { kind: SpanKind.INTERNAL }, parentContext)
    const own = this.otel.spanContext()
    this.spanId = own.spanId
    this.traceId = own.traceId
    this.sampled = (own.traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED
    this.status = { _tag: "Started", startTime }
  }

  /** As @effect/opentelemetry ends it: a failure is an ERROR, recorded with its fields. */
  end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    this.status = { _tag: "Ended", startTime: this.status.startTime, endTime, exit }
    const error = Exit.isFailure(exit) ? Cause.prettyErrors(exit.cause)[0] : undefined
    if (error !== undefined) {
      this.otel.recordException(error)
      this.otel.setStatus({ code: SpanStatusCode.ERROR, message: error.message })
    }
    this.otel.end()
  }
  attribute(key: string, value: unknown): void {
    this.attributes.set(key, value)
    this.otel.setAttribute(key, String(value))
  }
  event(name: string): void {
    this.otel.addEvent(name)
  }
  addLinks(links: ReadonlyArray<EffectTracer.SpanLink>): void {
    this.links.push(...links)
  }
}

const effectTracerOver = (tracer: OtelTracer): EffectTracer.Tracer =>
  EffectTracer.make({
    span: (name, parent, context, links, startTime, kind) =>
      new BridgedSpan(tracer, name, parent, context, links.slice(), startTime, kind),
    context: (execution) => execution(),
  })

type LogLine = Readonly<Record<string, unknown>>

interface Traced {
  readonly exporter: InMemorySpanExporter
  readonly tracer: OtelTracer
  /** Every span any request of the suite ended, kept across `reset`s of the exporter. */
  readonly everySpan: Array<ReadableSpan>
}

const tracedProvider = (): Traced => {
  const exporter = new InMemorySpanExporter()
  const everySpan: Array<ReadableSpan> = []
  const provider = new BasicTracerProvider({
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [
      new SimpleSpanProcessor(exporter),
      {
        onStart: () => {},
        onEnd: (span) => void everySpan.push(span),
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
  })
  return { exporter, tracer: provider.getTracer("petstore-test"), everySpan }
}

interface TestApp {
  readonly served: Served
  readonly logged: Array<LogLine>
  readonly close: () => Promise<void>
}

/** The app on a real server, its log lines kept (at `info`), its runtime tracing Effect spans. */
const startApp = async (
  options: Partial<AppOptions> & {
    readonly repository?: Layer.Layer<PetRepository>
    readonly effectTracer?: EffectTracer.Tracer
    readonly mount?: boolean
  } = {},
): Promise<TestApp> => {
  const { repository, effectTracer, mount, ...appOptions } = options
  const storage = repository ?? MemoryPetRepository.layer
  const runtime = ManagedRuntime.make(
    effectTracer === undefined ? storage : Layer.merge(storage, Layer.setTracer(effectTracer)),
  )
  const logged: Array<LogLine> = []
  const logger = createLogger("info", {
    write: (line: string) => void logged.push(JSON.parse(line) as LogLine),
  })
  const app = createApp({ apiKeys: [apiKey], logger, metrics: false, ...appOptions, runtime })
  const served = await serve((mount === true ? hostApp(mounted(app)) : app).callback())
  return {
    served,
    logged,
    close: async () => {
      await served.close()
      await runtime.dispose()
    },
  }
}

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

const send = async (
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> => {
  const response = await fetch(url, {
    ...init,
    headers: { "User-Agent": userAgent, ...init.headers },
    signal: AbortSignal.timeout(answerWithinMs),
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const keyed = { Authorization: `Bearer ${apiKey}` }
const rex = JSON.stringify({ name: "Rex", categoryId: 1, status: "available" })
const postPet = (url: string, headers: Record<string, string> = {}) =>
  send(url, {
    method: "POST",
    headers: { ...keyed, "Content-Type": "application/json", ...headers },
    body: rex,
  })

/** The spans `request` ended, and its answer. */
const tracedExchange = async (
  traced: Traced,
  request: () => Promise<Answer>,
): Promise<{ readonly answer: Answer; readonly spans: ReadonlyArray<ReadableSpan> }> => {
  traced.exporter.reset()
  const answer = await request()
  return { answer, spans: traced.exporter.getFinishedSpans() }
}

const serverSpanOf = (spans: ReadonlyArray<ReadableSpan>): ReadableSpan => {
  const server = spans.filter((span) => span.kind === SpanKind.SERVER)
  assert.equal(server.length, 1, `one SERVER span, among ${spans.map((span) => span.name)}`)
  return server[0] as ReadableSpan
}

const eventsNamed = (span: ReadableSpan, name: string) =>
  span.events.filter((event) => event.name === name)

/** Every name and attribute (of the span and of its events) a span carries, as text. */
const textsOf = (span: ReadableSpan): ReadonlyArray<string> => [
  span.name,
  span.status.message ?? "",
  ...Object.entries(span.attributes).flatMap(([name, value]) => [name, String(value)]),
  ...span.events.flatMap((event) => [
    event.name,
    ...Object.entries(event.attributes ?? {}).flatMap(([name, value]) => [name, String(value)]),
  ]),
]

describe("a traced app: the SERVER span of each request", () => {
  const traced = tracedProvider()
  let app: TestApp
  let port: number
  const at = (path: string) => `${app.served.origin}${path}`

  before(async () => {
    app = await startApp({
      tracing: otelRequestTracing(traced.tracer, { propagator: w3cTraceContext }),
      effectTracer: effectTracerOver(traced.tracer),
    })
    port = Number(new URL(app.served.origin).port)
    assert.equal((await postPet(at("/v1/pets"))).status, 201)
  })
  after(() => app.close())

  it("is a child of the caller's span, in the caller's trace, when the request carries traceparent", async () => {
    const { answer, spans } = await tracedExchange(traced, () =>
      send(at("/v1/pets"), {
        headers: {
          ...keyed,
          traceparent: `00-${callerTraceId}-${callerSpanId}-01`,
          tracestate: "vendor=opaque",
        },
      }),
    )
    assert.equal(answer.status, 200, answer.text)
    const server = serverSpanOf(spans)
    assert.equal(server.spanContext().traceId, callerTraceId)
    assert.equal(server.parentSpanContext?.spanId, callerSpanId)
    assert.equal(server.parentSpanContext?.isRemote, true)
    assert.equal(server.spanContext().traceState?.get("vendor"), "opaque")
  })

  it("starts a new trace without traceparent", async () => {
    const first = serverSpanOf((await tracedExchange(traced, () => send(at("/healthz")))).spans)
    const second = serverSpanOf((await tracedExchange(traced, () => send(at("/healthz")))).spans)
    assert.equal(first.parentSpanContext, undefined)
    assert.match(first.spanContext().traceId, /^[0-9a-f]{32}$/)
    assert.notEqual(first.spanContext().traceId, callerTraceId)
    assert.notEqual(first.spanContext().traceId, second.spanContext().traceId)
  })

  it("has the use case's span as its child: listPets, createPet, getPet", async () => {
    for (const [useCase, request] of [
      ["listPets", () => send(at("/v1/pets"), { headers: keyed })],
      ["createPet", () => postPet(at("/v1/pets"))],
      ["getPet", () => send(at("/v1/pets/1"), { headers: keyed })],
    ] as const) {
      const { answer, spans } = await tracedExchange(traced, request)
      assert.ok(answer.status < 300, answer.text)
      const server = serverSpanOf(spans)
      const child = spans.find((span) => span.name === useCase)
      assert.ok(child !== undefined, `${useCase} among ${spans.map((span) => span.name)}`)
      assert.equal(child.spanContext().traceId, server.spanContext().traceId, useCase)
      assert.equal(child.parentSpanContext?.spanId, server.spanContext().spanId, useCase)
    }
  })

  it("leaves the use case's span of an expected failure a success that names the failure", async () => {
    const { answer, spans } = await tracedExchange(traced, () =>
      send(at(`/v1/pets/${rawId}`), { headers: keyed }),
    )
    assert.equal(answer.status, 404)
    const useCase = spans.find((span) => span.name === "getPet")
    assert.equal(useCase?.status.code, SpanStatusCode.UNSET)
    assert.equal(useCase?.attributes["petstore.failure"], "PetNotFound")
    assert.deepEqual(useCase?.events, [])
  })

  it("keeps the caller's sampling decision: a caller's unsampled span has no sampled children here", async () => {
    const { answer, spans } = await tracedExchange(traced, () =>
      send(at("/v1/pets/1"), {
        headers: { ...keyed, traceparent: `00-${callerTraceId}-${callerSpanId}-00` },
      }),
    )
    assert.equal(answer.status, 200, answer.text)
    assert.deepEqual(
      spans.map((span) => span.name),
      [],
    )
  })

  it("is named and attributed by the HTTP semantic conventions, by route template, never by path", async () => {
    const cases = [
      { path: "/v1/pets?limit=5", name: "GET /v1/pets", route: "/v1/pets", op: "listPets" },
      { path: "/v1/pets/1", name: "GET /v1/pets/{petId}", route: "/v1/pets/{petId}", op: "getPet" },
      { path: `/v1/pets/${rawId}`, name: "GET /v1/pets/{petId}", route: "/v1/pets/{petId}" },
      { path: "/v1/openapi.json", name: "GET /v1/openapi.json", route: "/v1/openapi.json" },
      { path: "/healthz", name: "GET /healthz", route: "/healthz" },
      { path: `/nothing/${rawId}`, name: "GET", route: undefined },
      { path: "/v1/pets", method: "DELETE", name: "DELETE /v1/pets", route: "/v1/pets" },
    ]
    for (const { path, method = "GET", name, route, op } of cases) {
      const { answer, spans } = await tracedExchange(traced, () =>
        send(at(path), { method, headers: keyed }),
      )
      const server = serverSpanOf(spans)
      assert.equal(server.name, name, path)
      assert.equal(server.attributes["http.route"], route, path)
      assert.equal(server.attributes["http.request.method"], method, path)
      assert.equal(server.attributes["http.response.status_code"], answer.status, path)
      assert.equal(server.attributes["url.scheme"], "http", path)
      assert.equal(server.attributes["server.address"], "127.0.0.1", path)
      assert.equal(server.attributes["server.port"], port, path)
      assert.equal(server.attributes["user_agent.original"], userAgent, path)
      assert.equal(server.attributes["network.protocol.version"], "1.1", path)
      if (op !== undefined) assert.equal(server.attributes["petstore.operation"], op, path)
    }
  })

  it("bounds what it records of User-Agent and Host, the only client-chosen text in a span", async () => {
    const sendHeaders = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(at("/healthz"))
        request({ host: url.hostname, port: url.port, path: url.pathname, headers }, (answer) => {
          answer.resume()
          answer.on("end", () => resolve(answer.statusCode ?? 0))
        })
          .on("error", reject)
          .end()
      })
    const recorded = async (headers: Record<string, string>) => {
      const { answer, spans } = await tracedExchange(traced, async () => ({
        status: await sendHeaders(headers),
        headers: new Headers(),
        text: "",
      }))
      assert.equal(answer.status, 200)
      const { attributes } = serverSpanOf(spans)
      return { address: attributes["server.address"], userAgent: attributes["user_agent.original"] }
    }
    const long = await recorded({
      "User-Agent": `ua-${"x".repeat(8_000)}`,
      Host: `${"h".repeat(8_000)}.example`,
    })
    assert.equal(long.userAgent, `ua-${"x".repeat(253)}`)
    assert.equal(long.address, undefined)
    const hostile = await recorded({ "User-Agent": "agent", Host: "evil\u00a0host<script>:80" })
    assert.equal(hostile.address, undefined)
    const fine = await recorded({ "User-Agent": "agent/2", Host: "Pets.Example.com:8080" })
    assert.deepEqual(fine, { address: "pets.example.com", userAgent: "agent/2" })
    assert.equal((await recorded({ Host: "[2001:db8::1]:80" })).address, "2001:db8::1")
  })

  it("names the admitted key by its id, and sets petstore.operation only for an operation", async () => {
    const { spans } = await tracedExchange(traced, () => send(at("/v1/pets/1"), { headers: keyed }))
    const server = serverSpanOf(spans)
    assert.equal(server.attributes["petstore.key_id"], "env:1")
    assert.equal(server.attributes["petstore.operation"], "getPet")
    const health = serverSpanOf((await tracedExchange(traced, () => send(at("/healthz")))).spans)
    assert.equal(health.attributes["petstore.operation"], undefined)
    assert.equal(health.attributes["petstore.key_id"], undefined)
  })

  it("leaves a 4xx unset, not an error, with no exception", async () => {
    for (const [path, headers, status] of [
      [`/v1/pets/${rawId}`, keyed, 404],
      ["/nowhere", keyed, 404],
      ["/v1/pets", {}, 401],
      ["/v1/pets/not-a-number", keyed, 400],
    ] as const) {
      const { answer, spans } = await tracedExchange(traced, () => send(at(path), { headers }))
      assert.equal(answer.status, status, path)
      const server = serverSpanOf(spans)
      assert.equal(server.status.code, SpanStatusCode.UNSET, path)
      assert.equal(server.attributes["error.type"], undefined, path)
      assert.deepEqual(eventsNamed(server, "exception"), [], path)
    }
  })

  it("tells why a request was refused 401: petstore.auth events with the outcome", async () => {
    for (const [authorization, outcome] of [
      [undefined, "missing"],
      ["Basic dXNlcjpwYXNz", "malformed"],
      ["Bearer not-the-key", "wrong"],
      [`Bearer ${apiKey}`, "admitted"],
    ] as const) {
      const { spans } = await tracedExchange(traced, () =>
        send(at("/v1/pets"), {
          headers: authorization === undefined ? {} : { Authorization: authorization },
        }),
      )
      const auth = eventsNamed(serverSpanOf(spans), "petstore.auth")
      assert.deepEqual(
        auth.map((event) => event.attributes),
        [{ "petstore.auth.outcome": outcome }],
      )
    }
  })

  it("marks a create that replays an earlier one, and only that one", async () => {
    const idempotencyKey = `"idem-${rawId}"`
    const first = await tracedExchange(traced, () =>
      postPet(at("/v1/pets"), { "Idempotency-Key": idempotencyKey }),
    )
    const replay = await tracedExchange(traced, () =>
      postPet(at("/v1/pets"), { "Idempotency-Key": idempotencyKey }),
    )
    assert.equal(replay.answer.headers.get("idempotent-replayed"), "true")
    assert.equal(serverSpanOf(first.spans).attributes["petstore.idempotency.replayed"], undefined)
    assert.equal(serverSpanOf(replay.spans).attributes["petstore.idempotency.replayed"], true)
  })

  it("puts the trace and span ids on the request's access line", async () => {
    const { answer, spans } = await tracedExchange(traced, () =>
      send(at("/v1/pets/1"), { headers: { ...keyed, "X-Request-Id": "access-line-test" } }),
    )
    assert.equal(answer.status, 200)
    const server = serverSpanOf(spans)
    const line = app.logged.find((logged) => logged.requestId === "access-line-test")
    assert.equal(line?.message, "request")
    assert.equal(line?.trace_id, server.spanContext().traceId)
    assert.equal(line?.span_id, server.spanContext().spanId)
  })

  it("never carries a raw id from the path, an idempotency key or an API key, in any span", () => {
    assert.ok(traced.everySpan.length > 20, `${traced.everySpan.length} spans`)
    for (const span of traced.everySpan) {
      for (const text of textsOf(span)) {
        assert.ok(!text.includes(rawId), `${span.name}: ${text}`)
        assert.ok(!text.includes(apiKey), `${span.name}: ${text}`)
        assert.ok(!text.includes("not-the-key"), `${span.name}: ${text}`)
        assert.ok(!text.includes("/nothing"), `${span.name}: ${text}`)
      }
    }
  })
})

describe("a traced app mounted with koa-mount", () => {
  const traced = tracedProvider()
  let app: TestApp

  before(async () => {
    app = await startApp({
      tracing: otelRequestTracing(traced.tracer, { propagator: w3cTraceContext }),
      mount: true,
    })
  })
  after(() => app.close())

  it("names the route as the client reaches it, under the mount path", async () => {
    assert.equal((await postPet(`${app.served.origin}${mountPath}/v1/pets`)).status, 201)
    const { spans } = await tracedExchange(traced, () =>
      send(`${app.served.origin}${mountPath}/v1/pets/1`, { headers: keyed }),
    )
    const server = serverSpanOf(spans)
    assert.equal(server.name, "GET /petstore/v1/pets/{petId}")
    assert.equal(server.attributes["http.route"], "/petstore/v1/pets/{petId}")
    const unmatched = await tracedExchange(traced, () =>
      send(`${app.served.origin}${mountPath}/nothing/${rawId}`, { headers: keyed }),
    )
    assert.equal(serverSpanOf(unmatched.spans).name, "GET")
  })
})

describe("a traced app reads traceparent with the global propagator unless given one", () => {
  const traced = tracedProvider()
  let app: TestApp

  before(async () => {
    propagation.setGlobalPropagator(w3cTraceContext)
    app = await startApp({ tracing: otelRequestTracing(traced.tracer) })
  })
  after(async () => {
    propagation.disable()
    await app.close()
  })

  it("joins the caller's trace", async () => {
    const { spans } = await tracedExchange(traced, () =>
      send(`${app.served.origin}/healthz`, {
        headers: { traceparent: `00-${callerTraceId}-${callerSpanId}-01` },
      }),
    )
    const server = serverSpanOf(spans)
    assert.equal(server.spanContext().traceId, callerTraceId)
    assert.equal(server.parentSpanContext?.spanId, callerSpanId)
  })
})

describe("a traced app whose storage fails", () => {
  it("marks a 500 (a defect) as an error, with the failure the log line carries as an exception event", async () => {
    const traced = tracedProvider()
    const app = await startApp({
      tracing: otelRequestTracing(traced.tracer),
      repository: failingRepository(Effect.die(new Error("the repository died"))),
    })
    try {
      const { answer, spans } = await tracedExchange(traced, () =>
        send(`${app.served.origin}/v1/pets`, { headers: keyed }),
      )
      assert.equal(answer.status, 500, answer.text)
      const server = serverSpanOf(spans)
      assert.equal(server.status.code, SpanStatusCode.ERROR)
      assert.equal(server.attributes["error.type"], "500")
      const [exception, ...others] = eventsNamed(server, "exception")
      assert.deepEqual(others, [])
      assert.equal(exception?.attributes?.["exception.message"], "the repository died")
      assert.equal(exception?.attributes?.["exception.type"], "Error")
      const failed = app.logged.find((line) => line.message === "request failed unexpectedly")
      assert.equal(failed?.error, exception?.attributes?.["exception.stacktrace"])
      assert.equal(failed?.trace_id, server.spanContext().traceId)
    } finally {
      await app.close()
    }
  })

  it("marks a 503 as an error, with the cause its warn line names, and the warn line names the span", async () => {
    const traced = tracedProvider()
    const app = await startApp({
      tracing: otelRequestTracing(traced.tracer),
      repository: failingRepository(
        Effect.fail(
          new StorageUnavailable({
            cause: new Error("no connection", { cause: new Error("the disk is gone") }),
          }),
        ),
      ),
    })
    try {
      const { answer, spans } = await tracedExchange(traced, () =>
        send(`${app.served.origin}/v1/pets`, { headers: keyed }),
      )
      assert.equal(answer.status, 503, answer.text)
      const server = serverSpanOf(spans)
      assert.equal(server.status.code, SpanStatusCode.ERROR)
      assert.equal(server.attributes["error.type"], "503")
      const exceptions = eventsNamed(server, "exception")
      assert.deepEqual(
        exceptions.map((event) => event.attributes?.["exception.message"]),
        ["no connection: the disk is gone"],
      )
      const warned = app.logged.find((line) => line.message === "storage unavailable")
      assert.equal(warned?.level, "warn")
      assert.equal(warned?.cause, "no connection: the disk is gone")
      assert.equal(warned?.trace_id, server.spanContext().traceId)
      assert.equal(warned?.span_id, server.spanContext().spanId)
    } finally {
      await app.close()
    }
  })
})

describe("a traced app with abuse limits", () => {
  const traced = tracedProvider()
  let app: TestApp

  before(async () => {
    app = await startApp({
      tracing: otelRequestTracing(traced.tracer),
      limits: {
        perKey: { capacity: 1, windowSeconds: 60 },
        failedAuthPerAddress: { capacity: 1, windowSeconds: 60 },
      },
    })
  })
  after(() => app.close())

  const refusalsOf = (span: ReadableSpan) =>
    eventsNamed(span, "petstore.rate_limit.refused").map((event) => event.attributes)

  it("tells a 429 of the key's limit: its scope and when to retry", async () => {
    const url = `${app.served.origin}/v1/pets`
    const admitted = await tracedExchange(traced, () => send(url, { headers: keyed }))
    assert.equal(admitted.answer.status, 200)
    assert.deepEqual(refusalsOf(serverSpanOf(admitted.spans)), [])
    const refused = await tracedExchange(traced, () => send(url, { headers: keyed }))
    assert.equal(refused.answer.status, 429)
    const server = serverSpanOf(refused.spans)
    assert.deepEqual(refusalsOf(server), [
      {
        "petstore.rate_limit.scope": "key",
        "petstore.rate_limit.retry_after": Number(refused.answer.headers.get("retry-after")),
      },
    ])
    assert.equal(server.attributes["petstore.key_id"], "env:1")
    assert.equal(server.status.code, SpanStatusCode.UNSET)
  })

  it("tells a 429 of an address past its budget of wrong keys", async () => {
    const wrong = { Authorization: "Bearer not-the-key" }
    const url = `${app.served.origin}/v1/pets`
    assert.equal((await send(url, { headers: wrong })).status, 401)
    const refused = await tracedExchange(traced, () => send(url, { headers: wrong }))
    assert.equal(refused.answer.status, 429)
    const server = serverSpanOf(refused.spans)
    assert.deepEqual(
      eventsNamed(server, "petstore.auth").map((event) => event.attributes),
      [{ "petstore.auth.outcome": "wrong" }],
    )
    assert.deepEqual(refusalsOf(server), [
      {
        "petstore.rate_limit.scope": "address",
        "petstore.rate_limit.retry_after": Number(refused.answer.headers.get("retry-after")),
      },
    ])
  })
})

/** Stored keys over a store that knows no key, or cannot answer at all. */
const storedKeysOver = (answer: "none" | "down", maxUnknownLookupsPerSecond: number) => {
  const store = ApiKeyStore.of({
    create: () => Effect.die("not used"),
    createFirst: () => Effect.die("not used"),
    list: Effect.die("not used"),
    revoke: () => Effect.die("not used"),
    findIdByHash: () =>
      answer === "none"
        ? Effect.succeed(Option.none())
        : Effect.fail(new StorageUnavailable({ cause: new Error("the key store is down") })),
    recordUses: () => Effect.void,
  })
  return ManagedRuntime.make(
    Layer.scoped(StoredKeys.StoredKeys, StoredKeys.make({ maxUnknownLookupsPerSecond })).pipe(
      Layer.provide(Layer.succeed(ApiKeyStore, store)),
    ),
  )
}

describe("a traced app with stored keys", () => {
  it("tells a stored key's verdict: unknown (401), deferred (429, lookups), unavailable (503, an error)", async () => {
    const traced = tracedProvider()
    const knowing = storedKeysOver("none", 1)
    const down = storedKeysOver("down", 100)
    const app = await startApp({
      tracing: otelRequestTracing(traced.tracer),
      storedKeys: await knowing.runPromise(StoredKeys.StoredKeys),
    })
    const downApp = await startApp({
      tracing: otelRequestTracing(traced.tracer),
      storedKeys: await down.runPromise(StoredKeys.StoredKeys),
    })
    const ask = async (served: TestApp) => {
      const key = generateApiKey()
      const { answer, spans } = await tracedExchange(traced, () =>
        send(`${served.served.origin}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } }),
      )
      const server = serverSpanOf(spans)
      for (const text of textsOf(server)) assert.ok(!text.includes(key), text)
      return {
        status: answer.status,
        outcomes: eventsNamed(server, "petstore.auth").map(
          (event) => event.attributes?.["petstore.auth.outcome"],
        ),
        refusals: eventsNamed(server, "petstore.rate_limit.refused").map(
          (event) => event.attributes,
        ),
        exceptions: eventsNamed(server, "exception").map(
          (event) => event.attributes?.["exception.message"],
        ),
        error: server.status.code === SpanStatusCode.ERROR,
      }
    }
    try {
      assert.deepEqual(await ask(app), {
        status: 401,
        outcomes: ["unknown"],
        refusals: [],
        exceptions: [],
        error: false,
      })
      assert.deepEqual(await ask(app), {
        status: 429,
        outcomes: ["deferred"],
        refusals: [
          { "petstore.rate_limit.scope": "lookups", "petstore.rate_limit.retry_after": 1 },
        ],
        exceptions: [],
        error: false,
      })
      assert.deepEqual(await ask(downApp), {
        status: 503,
        outcomes: ["unavailable"],
        refusals: [],
        exceptions: ["the key store is down"],
        error: true,
      })
    } finally {
      await app.close()
      await downApp.close()
      await knowing.dispose()
      await down.dispose()
    }
  })
})

describe("an app not given tracing", () => {
  const traced = tracedProvider()
  let app: TestApp

  before(async () => {
    // Registered globally: an app that traced on its own would find them.
    trace.setGlobalTracerProvider({ getTracer: () => traced.tracer })
    propagation.setGlobalPropagator(w3cTraceContext)
    app = await startApp({ repository: failingRepository(Effect.fail(storageDown)) })
  })
  after(async () => {
    trace.disable()
    propagation.disable()
    await app.close()
  })

  const storageDown = new StorageUnavailable({ cause: new Error("down") })

  it("starts no span and writes no trace ids, on its access lines or its warnings", async () => {
    const traceparent = `00-${callerTraceId}-${callerSpanId}-01`
    assert.equal(
      (await send(`${app.served.origin}/v1/pets`, { headers: { ...keyed, traceparent } })).status,
      503,
    )
    assert.equal(
      (await send(`${app.served.origin}/healthz`, { headers: { traceparent } })).status,
      200,
    )
    assert.deepEqual(traced.everySpan, [])
    assert.ok(app.logged.some((line) => line.message === "storage unavailable"))
    assert.equal(app.logged.filter((line) => line.message === "request").length, 2)
    for (const line of app.logged) {
      assert.ok(!("trace_id" in line) && !("span_id" in line), JSON.stringify(line))
    }
  })

  it("never loads @opentelemetry/api: only the ./otel entry point imports it", async () => {
    const sources = new URL("../../src/", import.meta.url)
    const files = await readdir(sources, { recursive: true })
    const importers: Array<string> = []
    for (const file of files.filter((name) => name.endsWith(".ts"))) {
      const text = await readFile(new URL(file, sources), "utf8")
      if (/from "@opentelemetry\/|import\("@opentelemetry\/|otel-request-tracing\.js"/.test(text)) {
        importers.push(file)
      }
    }
    assert.deepEqual(importers, ["observability/otel-request-tracing.ts"])
  })
})
