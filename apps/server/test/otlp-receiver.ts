import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http"
import { once } from "node:events"
import { buffer } from "node:stream/consumers"
import { gunzipSync } from "node:zlib"
import { Root, type IField, type IType } from "protobufjs"

export type AttributeValue = string | number | boolean | bigint | ReadonlyArray<AttributeValue>
export type Attributes = Readonly<Record<string, AttributeValue>>

export type SpanKindName =
  "UNSPECIFIED" | "INTERNAL" | "SERVER" | "CLIENT" | "PRODUCER" | "CONSUMER"
export type StatusCodeName = "UNSET" | "OK" | "ERROR"

export interface ReceivedEvent {
  readonly name: string
  readonly timeUnixNano: bigint
  readonly attributes: Attributes
}

export interface ReceivedLink {
  readonly traceId: string
  readonly spanId: string
  readonly attributes: Attributes
}

/** One span as an OTLP receiver got it, the same whichever encoding carried it. */
export interface ReceivedSpan {
  /** Lower-case hex, 32 digits. */
  readonly traceId: string
  /** Lower-case hex, 16 digits. */
  readonly spanId: string
  readonly parentSpanId: string | undefined
  /** The W3C `tracestate` the span carries, if any. */
  readonly traceState: string | undefined
  readonly name: string
  readonly kind: SpanKindName
  readonly startTimeUnixNano: bigint
  readonly endTimeUnixNano: bigint
  /** An integer value is a bigint, a floating-point one a number. */
  readonly attributes: Attributes
  readonly events: ReadonlyArray<ReceivedEvent>
  readonly links: ReadonlyArray<ReceivedLink>
  readonly status: { readonly code: StatusCodeName; readonly message: string | undefined }
  readonly resource: Attributes
  /** The instrumentation scope's name (the tracer's name). */
  readonly scope: string
}

export interface ReceivedRequest {
  /** The media type, without parameters. */
  readonly contentType: string
  readonly headers: IncomingHttpHeaders
  readonly spanCount: number
  /** Why the body could not be decoded (the receiver answered 400 or 415). */
  readonly error: string | undefined
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:PORT`; exporters send to `${url}/v1/traces`. */
  readonly url: string
  /** The spans of every export the receiver acknowledged, in arrival order. */
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** Every `POST /v1/traces`, answered or not. */
  readonly requests: () => ReadonlyArray<ReceivedRequest>
  /** Resolves with the spans once `predicate` holds; rejects after `timeoutMs` naming the spans seen. */
  readonly waitForSpans: (
    predicate: (spans: ReadonlyArray<ReceivedSpan>) => boolean,
    timeoutMs?: number,
  ) => Promise<ReadonlyArray<ReceivedSpan>>
  /** Stops listening and destroys open connections, answered or not. */
  readonly close: () => Promise<void>
}

/** `ok` acknowledges; `unavailable` answers 503 to every export; `hang` reads the body and never answers. */
export type ReceiverAnswer = "ok" | "unavailable" | "hang"

// The OTLP trace messages by field number, from opentelemetry-proto v1
// (collector/trace/v1/trace_service.proto, trace/v1/trace.proto, common/v1/common.proto,
// resource/v1/resource.proto). Enums are int32 on the wire; fields a test never reads are left out
// (unknown fields are skipped when decoding).
const message = (fields: IType["fields"], oneofs: IType["oneofs"] = {}): IType => ({
  edition: "proto3",
  fields,
  oneofs,
})
const one = (id: number, type: string): IField => ({ id, type })
const many = (id: number, type: string): IField => ({ id, type, rule: "repeated" })

const otlpTrace = Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: message({ resourceSpans: many(1, "ResourceSpans") }),
    ExportTraceServiceResponse: message({ partialSuccess: one(1, "ExportTracePartialSuccess") }),
    ExportTracePartialSuccess: message({
      rejectedSpans: one(1, "int64"),
      errorMessage: one(2, "string"),
    }),
    ResourceSpans: message({
      resource: one(1, "Resource"),
      scopeSpans: many(2, "ScopeSpans"),
    }),
    Resource: message({ attributes: many(1, "KeyValue") }),
    ScopeSpans: message({
      scope: one(1, "InstrumentationScope"),
      spans: many(2, "Span"),
    }),
    InstrumentationScope: message({ name: one(1, "string") }),
    Span: message({
      traceId: one(1, "bytes"),
      spanId: one(2, "bytes"),
      traceState: one(3, "string"),
      parentSpanId: one(4, "bytes"),
      name: one(5, "string"),
      kind: one(6, "int32"),
      startTimeUnixNano: one(7, "fixed64"),
      endTimeUnixNano: one(8, "fixed64"),
      attributes: many(9, "KeyValue"),
      events: many(11, "Event"),
      links: many(13, "Link"),
      status: one(15, "Status"),
    }),
    Event: message({
      timeUnixNano: one(1, "fixed64"),
      name: one(2, "string"),
      attributes: many(3, "KeyValue"),
    }),
    Link: message({
      traceId: one(1, "bytes"),
      spanId: one(2, "bytes"),
      attributes: many(4, "KeyValue"),
    }),
    Status: message({ message: one(2, "string"), code: one(3, "int32") }),
    KeyValue: message({ key: one(1, "string"), value: one(2, "AnyValue") }),
    AnyValue: message(
      {
        stringValue: one(1, "string"),
        boolValue: one(2, "bool"),
        intValue: one(3, "int64"),
        doubleValue: one(4, "double"),
        arrayValue: one(5, "ArrayValue"),
        kvlistValue: one(6, "KeyValueList"),
        bytesValue: one(7, "bytes"),
      },
      {
        value: {
          oneof: [
            "stringValue",
            "boolValue",
            "intValue",
            "doubleValue",
            "arrayValue",
            "kvlistValue",
            "bytesValue",
          ],
        },
      },
    ),
    ArrayValue: message({ values: many(1, "AnyValue") }),
    KeyValueList: message({ values: many(1, "KeyValue") }),
  },
})
const exportRequest = otlpTrace.lookupType("ExportTraceServiceRequest")
const exportResponse = otlpTrace.lookupType("ExportTraceServiceResponse")

/**
 * How one encoding reaches the shape the normalizer reads (OTLP JSON's: camelCase keys, 64-bit
 * integers as strings or numbers, enums as integers) and how its ids are written.
 */
interface Encoding {
  readonly parse: (body: Buffer) => unknown
  readonly idToHex: (id: string) => string
  readonly emptyResponse: Buffer
}

const encodings = new Map<string, Encoding>([
  [
    "application/x-protobuf",
    {
      parse: (body) =>
        exportRequest.toObject(exportRequest.decode(body), {
          longs: String,
          bytes: String,
          enums: Number,
        }),
      idToHex: (base64) => Buffer.from(base64, "base64").toString("hex"),
      emptyResponse: Buffer.from(exportResponse.encode(exportResponse.create()).finish()),
    },
  ],
  [
    "application/json",
    {
      parse: (body) => JSON.parse(body.toString("utf8")),
      idToHex: (hex) => hex.toLowerCase(),
      emptyResponse: Buffer.from("{}"),
    },
  ],
])

const spanKinds: ReadonlyArray<SpanKindName> = [
  "UNSPECIFIED",
  "INTERNAL",
  "SERVER",
  "CLIENT",
  "PRODUCER",
  "CONSUMER",
]
const statusCodes: ReadonlyArray<StatusCodeName> = ["UNSET", "OK", "ERROR"]

type Fields = Readonly<Record<string, unknown>>

const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const malformed = (path: string, expected: string): never => {
  throw new Error(`OTLP ${path}: expected ${expected}`)
}

// Proto3 semantics: an absent (or JSON null) field holds its type's default.
const isAbsent = (value: unknown): value is undefined | null =>
  value === undefined || value === null

const fieldsAt = (value: unknown, path: string): Fields =>
  isAbsent(value) ? {} : isFields(value) ? value : malformed(path, "an object")

const listAt = (value: unknown, path: string): ReadonlyArray<unknown> =>
  isAbsent(value) ? [] : Array.isArray(value) ? value : malformed(path, "an array")

const textAt = (value: unknown, path: string): string =>
  isAbsent(value) ? "" : typeof value === "string" ? value : malformed(path, "a string")

const integerAt = (value: unknown, path: string): bigint => {
  if (isAbsent(value)) return 0n
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value)
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value)
  return malformed(path, "an integer")
}

const doubleAt = (value: unknown, path: string): number => {
  if (typeof value === "number") return value
  if (value === "NaN" || value === "Infinity" || value === "-Infinity") return Number(value)
  return malformed(path, "a number")
}

const enumAt = <Name>(names: ReadonlyArray<Name>, value: unknown, path: string): Name => {
  const index = isAbsent(value) ? 0 : typeof value === "number" ? value : -1
  return names[index] ?? malformed(path, `one of the integers 0 to ${names.length - 1}`)
}

const anyValueAt = (value: unknown, path: string): AttributeValue => {
  const fields = fieldsAt(value, path)
  if ("stringValue" in fields) return textAt(fields.stringValue, `${path}.stringValue`)
  if ("boolValue" in fields) {
    return typeof fields.boolValue === "boolean"
      ? fields.boolValue
      : malformed(`${path}.boolValue`, "a boolean")
  }
  if ("intValue" in fields) return integerAt(fields.intValue, `${path}.intValue`)
  if ("doubleValue" in fields) return doubleAt(fields.doubleValue, `${path}.doubleValue`)
  if ("arrayValue" in fields) {
    const values = fieldsAt(fields.arrayValue, `${path}.arrayValue`).values
    return listAt(values, `${path}.arrayValue.values`).map((item, index) =>
      anyValueAt(item, `${path}.arrayValue.values[${index}]`),
    )
  }
  return malformed(
    path,
    "a string, bool, int, double or array value (span attributes hold no other)",
  )
}

const attributesAt = (value: unknown, path: string): Attributes =>
  Object.fromEntries(
    listAt(value, path).map((item, index) => {
      const keyValue = fieldsAt(item, `${path}[${index}]`)
      return [
        textAt(keyValue.key, `${path}[${index}].key`),
        anyValueAt(keyValue.value, `${path}[${index}].value`),
      ]
    }),
  )

const idAt = (value: unknown, bytes: number, encoding: Encoding, path: string): string => {
  const hex = encoding.idToHex(textAt(value, path))
  return /^[0-9a-f]*$/.test(hex) && hex.length === bytes * 2
    ? hex
    : malformed(path, `a ${bytes}-byte id`)
}

const optionalText = (text: string): string | undefined => (text === "" ? undefined : text)

const spanAt = (
  value: unknown,
  path: string,
  encoding: Encoding,
  resource: Attributes,
  scope: string,
): ReceivedSpan => {
  const span = fieldsAt(value, path)
  const status = fieldsAt(span.status, `${path}.status`)
  return {
    traceId: idAt(span.traceId, 16, encoding, `${path}.traceId`),
    spanId: idAt(span.spanId, 8, encoding, `${path}.spanId`),
    parentSpanId: textAt(span.parentSpanId, `${path}.parentSpanId`)
      ? idAt(span.parentSpanId, 8, encoding, `${path}.parentSpanId`)
      : undefined,
    traceState: optionalText(textAt(span.traceState, `${path}.traceState`)),
    name: textAt(span.name, `${path}.name`),
    kind: enumAt(spanKinds, span.kind, `${path}.kind`),
    startTimeUnixNano: integerAt(span.startTimeUnixNano, `${path}.startTimeUnixNano`),
    endTimeUnixNano: integerAt(span.endTimeUnixNano, `${path}.endTimeUnixNano`),
    attributes: attributesAt(span.attributes, `${path}.attributes`),
    events: listAt(span.events, `${path}.events`).map((item, index) => {
      const event = fieldsAt(item, `${path}.events[${index}]`)
      return {
        name: textAt(event.name, `${path}.events[${index}].name`),
        timeUnixNano: integerAt(event.timeUnixNano, `${path}.events[${index}].timeUnixNano`),
        attributes: attributesAt(event.attributes, `${path}.events[${index}].attributes`),
      }
    }),
    links: listAt(span.links, `${path}.links`).map((item, index) => {
      const link = fieldsAt(item, `${path}.links[${index}]`)
      return {
        traceId: idAt(link.traceId, 16, encoding, `${path}.links[${index}].traceId`),
        spanId: idAt(link.spanId, 8, encoding, `${path}.links[${index}].spanId`),
        attributes: attributesAt(link.attributes, `${path}.links[${index}].attributes`),
      }
    }),
    status: {
      code: enumAt(statusCodes, status.code, `${path}.status.code`),
      message: optionalText(textAt(status.message, `${path}.status.message`)),
    },
    resource,
    scope,
  }
}

/** The spans of an ExportTraceServiceRequest; throws naming the first malformed field. */
const spansOf = (request: unknown, encoding: Encoding): ReadonlyArray<ReceivedSpan> =>
  listAt(fieldsAt(request, "request").resourceSpans, "resourceSpans").flatMap((item, r) => {
    const resourceSpans = fieldsAt(item, `resourceSpans[${r}]`)
    const resource = fieldsAt(resourceSpans.resource, `resourceSpans[${r}].resource`)
    const attributes = attributesAt(resource.attributes, `resourceSpans[${r}].resource.attributes`)
    return listAt(resourceSpans.scopeSpans, `resourceSpans[${r}].scopeSpans`).flatMap((item, s) => {
      const path = `resourceSpans[${r}].scopeSpans[${s}]`
      const scopeSpans = fieldsAt(item, path)
      const scope = textAt(fieldsAt(scopeSpans.scope, `${path}.scope`).name, `${path}.scope.name`)
      return listAt(scopeSpans.spans, `${path}.spans`).map((span, index) =>
        spanAt(span, `${path}.spans[${index}]`, encoding, attributes, scope),
      )
    })
  })

class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

const decodeBody = (
  body: Buffer,
  contentEncoding: string | undefined,
  encoding: Encoding,
): ReadonlyArray<ReceivedSpan> => {
  const coding = (contentEncoding ?? "identity").trim().toLowerCase()
  if (coding !== "identity" && coding !== "gzip") {
    throw new Refused(415, `unsupported Content-Encoding ${coding}`)
  }
  try {
    return spansOf(encoding.parse(coding === "gzip" ? gunzipSync(body) : body), encoding)
  } catch (error) {
    throw new Refused(400, error instanceof Error ? error.message : String(error))
  }
}

/** Starts an OTLP/HTTP trace receiver on an ephemeral port of 127.0.0.1. */
export const startOtlpReceiver = async (
  options: { readonly answer?: ReceiverAnswer } = {},
): Promise<OtlpReceiver> => {
  const answer = options.answer ?? "ok"
  const spans: ReceivedSpan[] = []
  const requests: ReceivedRequest[] = []
  const onSpans = new Set<() => void>()
  const onClose = new Set<() => void>()

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const path = new URL(request.url ?? "/", "http://receiver").pathname
    if (request.method !== "POST" || path !== "/v1/traces") {
      response.writeHead(404).end()
      return
    }
    const contentType = (request.headers["content-type"] ?? "").split(";")[0]?.trim() ?? ""
    const record = (spanCount: number, error: string | undefined) =>
      requests.push({ contentType, headers: request.headers, spanCount, error })
    const body = await buffer(request)
    const encoding = encodings.get(contentType.toLowerCase())
    if (encoding === undefined) {
      record(0, `unsupported Content-Type ${contentType}`)
      response.writeHead(415).end()
      return
    }
    let received: ReadonlyArray<ReceivedSpan>
    try {
      received = decodeBody(body, request.headers["content-encoding"], encoding)
    } catch (error) {
      const refusal = error instanceof Refused ? error : new Refused(400, String(error))
      record(0, refusal.message)
      response.writeHead(refusal.status, { "content-type": "text/plain" }).end(refusal.message)
      return
    }
    record(received.length, undefined)
    if (answer === "hang") return
    if (answer === "unavailable") {
      response.writeHead(503).end()
      return
    }
    spans.push(...received)
    response.writeHead(200, { "content-type": contentType }).end(encoding.emptyResponse)
    onSpans.forEach((notify) => notify())
  }

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy())
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("the receiver has no port")

  const waitForSpans = (
    predicate: (spans: ReadonlyArray<ReceivedSpan>) => boolean,
    timeoutMs = 10_000,
  ): Promise<ReadonlyArray<ReceivedSpan>> =>
    new Promise((resolve, reject) => {
      const settle = (outcome: () => void) => {
        clearTimeout(timer)
        onSpans.delete(check)
        onClose.delete(closed)
        outcome()
      }
      const check = () => {
        const seen = [...spans]
        if (predicate(seen)) settle(() => resolve(seen))
      }
      const failure = (why: string) => {
        const names = spans.map((span) => span.name).join(", ") || "none"
        const refused = requests.flatMap((request) => (request.error ? [request.error] : []))
        return new Error(
          `${why}; spans seen: ${names}` +
            (refused.length ? `; refused: ${refused.join("; ")}` : ""),
        )
      }
      const closed = () => settle(() => reject(failure("the receiver closed")))
      const timer = setTimeout(
        () => settle(() => reject(failure(`no matching spans after ${timeoutMs} ms`))),
        timeoutMs,
      )
      onSpans.add(check)
      onClose.add(closed)
      check()
    })

  return {
    url: `http://127.0.0.1:${address.port}`,
    spans: () => [...spans],
    requests: () => [...requests],
    waitForSpans,
    close: async () => {
      onClose.forEach((notify) => notify())
      const closing = once(server, "close")
      server.close()
      server.closeAllConnections()
      await closing
    },
  }
}

const byStart = (a: ReceivedSpan, b: ReceivedSpan): number =>
  a.startTimeUnixNano < b.startTimeUnixNano ? -1 : a.startTimeUnixNano > b.startTimeUnixNano ? 1 : 0

/** The spans of the same trace whose parent is `span`, in start order. */
export const childrenOf = (
  spans: ReadonlyArray<ReceivedSpan>,
  span: ReceivedSpan,
): ReadonlyArray<ReceivedSpan> =>
  spans
    .filter((child) => child.traceId === span.traceId && child.parentSpanId === span.spanId)
    .sort(byStart)

/**
 * The trace as indented lines, two spaces a level: each root (a span whose parent is not among
 * `spans`, such as a server span under a remote caller) then its children, in start order.
 */
export const spanTree = (
  spans: ReadonlyArray<ReceivedSpan>,
  traceId: string,
): ReadonlyArray<string> => {
  const inTrace = spans.filter((span) => span.traceId === traceId)
  const ids = new Set(inTrace.map((span) => span.spanId))
  const lines = (span: ReceivedSpan, depth: number): ReadonlyArray<string> => [
    `${"  ".repeat(depth)}${span.name}`,
    ...childrenOf(inTrace, span).flatMap((child) => lines(child, depth + 1)),
  ]
  return inTrace
    .filter((span) => span.parentSpanId === undefined || !ids.has(span.parentSpanId))
    .sort(byStart)
    .flatMap((root) => lines(root, 0))
}

/** The span's attribute `name`, or undefined when it has none (inherited keys never count). */
export const attribute = (span: ReceivedSpan, name: string): AttributeValue | undefined =>
  Object.hasOwn(span.attributes, name) ? span.attributes[name] : undefined
