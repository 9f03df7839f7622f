import type { IncomingMessage } from "node:http"
import { isIP } from "node:net"
import {
  defaultTextMapGetter,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Attributes,
  type Context as OtelContext,
  type Exception,
  type Span,
  type TextMapPropagator,
  type TraceState,
  type Tracer,
} from "@opentelemetry/api"
import { Context, Tracer as EffectTracer } from "effect"
import { describeCause } from "../vocabulary/logger.js"
import type {
  RequestOutcome,
  RequestSpan,
  RequestTracing,
  SpanAttributes,
  SpanValue,
} from "../vocabulary/tracing.js"

export interface OtelRequestTracingOptions {
  /**
   * Reads the caller's span from the request's headers; the global propagator unless given. The
   * global one is a no-op until an SDK registers one (the Node SDK registers W3C trace context
   * and baggage); give `new W3CTraceContextPropagator()` from `@opentelemetry/core` to honour
   * `traceparent` and `tracestate` whatever is registered.
   */
  readonly propagator?: TextMapPropagator | undefined
}

/**
 * Where @effect/opentelemetry reads an external parent's trace flags and trace state (its
 * `OtelTraceFlags` and `OtelTraceState` tags): without the flags it takes the parent as sampled,
 * and a span the sampler dropped would get children that are kept.
 */
const traceFlagsTag = Context.GenericTag<TraceFlags>("@effect/opentelemetry/Tracer/OtelTraceFlags")
const traceStateTag = Context.GenericTag<TraceState>("@effect/opentelemetry/Tracer/OtelTraceState")

/** The methods the HTTP semantic conventions know; any other is `_OTHER`. */
const knownMethods = new Set([
  "CONNECT",
  "DELETE",
  "GET",
  "HEAD",
  "OPTIONS",
  "PATCH",
  "POST",
  "PUT",
  "TRACE",
])

/** `host`, `host:port`, `[v6]` or `[v6]:port`, as `Host` carries them. */
const hostPattern = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d{1,5}))?$/

/** A DNS name (RFC 1123: at most 253 characters of letters, digits, `-` and dots). */
const hostNamePattern =
  /^(?=.{1,253}$)[a-z\d](?:[a-z\d-]*[a-z\d])?(?:\.[a-z\d](?:[a-z\d-]*[a-z\d])?)*\.?$/i

/**
 * `User-Agent` is the client's own text: a span keeps its first 256 characters (OpenTelemetry's
 * attribute length limits are unset by default, and a head may carry 16 KiB).
 */
const userAgentLength = 256

/** The name `Host` gives, if it is a host name or an address: anything else is not recorded. */
const serverAddress = (name: string): string | undefined =>
  isIP(name) !== 0 || hostNamePattern.test(name) ? name.toLowerCase() : undefined

/** The attributes known when the request arrives, by the HTTP semantic conventions (stable). */
const requestAttributes = (
  request: IncomingMessage,
  method: string,
  scheme: "http" | "https",
): Attributes => {
  const attributes: Attributes = {
    "http.request.method": method,
    "url.scheme": scheme,
    "network.protocol.version": request.httpVersion === "2.0" ? "2" : request.httpVersion,
  }
  if (method === "_OTHER" && request.method !== undefined) {
    attributes["http.request.method_original"] = request.method
  }
  const host = hostPattern.exec(request.headers.host ?? "")
  const address = serverAddress(host?.[1] ?? host?.[2] ?? "")
  if (address !== undefined) {
    attributes["server.address"] = address
    if (host?.[3] !== undefined) attributes["server.port"] = Number(host[3])
  }
  const userAgent = request.headers["user-agent"]
  if (userAgent !== undefined) {
    attributes["user_agent.original"] = userAgent.slice(0, userAgentLength)
  }
  return attributes
}

/** A failure as an exception event: its type, its message and those behind it, its stack. */
const exceptionOf = (cause: unknown): Exception => {
  if (!(cause instanceof Error)) return describeCause(cause) || String(cause)
  const exception = { name: cause.name, message: describeCause(cause) }
  return cause.stack === undefined ? exception : { ...exception, stack: cause.stack }
}

class OtelRequestSpan implements RequestSpan {
  readonly traceId: string
  readonly spanId: string
  #parent: EffectTracer.ExternalSpan | undefined

  constructor(
    private readonly span: Span,
    /** The span's name until the route is known: the method, or `HTTP` for one not known. */
    private readonly method: string,
  ) {
    const context = span.spanContext()
    this.traceId = context.traceId
    this.spanId = context.spanId
  }

  get parent(): EffectTracer.ExternalSpan {
    if (this.#parent === undefined) {
      const { traceId, spanId, traceFlags, traceState } = this.span.spanContext()
      const flags = Context.make(traceFlagsTag, traceFlags)
      this.#parent = EffectTracer.externalSpan({
        traceId,
        spanId,
        sampled: (traceFlags & TraceFlags.SAMPLED) === TraceFlags.SAMPLED,
        context: traceState === undefined ? flags : Context.add(flags, traceStateTag, traceState),
      })
    }
    return this.#parent
  }

  setAttribute(name: string, value: SpanValue): void {
    this.span.setAttribute(name, value)
  }

  addEvent(name: string, attributes?: SpanAttributes): void {
    this.span.addEvent(name, attributes)
  }

  recordFailure(cause: unknown): void {
    this.span.recordException(exceptionOf(cause))
  }

  end({ route, operation, status }: RequestOutcome): void {
    this.span.updateName(route === undefined ? this.method : `${this.method} ${route}`)
    const attributes: Attributes = { "http.response.status_code": status }
    if (route !== undefined) attributes["http.route"] = route
    if (operation !== undefined) attributes["petstore.operation"] = operation
    // A 4xx is the client's doing: not an error of a server span.
    if (status >= 500) {
      attributes["error.type"] = String(status)
      this.span.setStatus({ code: SpanStatusCode.ERROR })
    }
    this.span.setAttributes(attributes)
    this.span.end()
  }
}

/**
 * Traces requests with OpenTelemetry: one SERVER span each from `tracer`, a child of the
 * caller's span when the request carries one (W3C `traceparent`, read by the propagator), in a
 * new trace otherwise. Named and attributed by the HTTP semantic conventions (stable):
 * `{method} {route}` (`GET /v1/pets/{petId}`; the method alone when no route knows the path),
 * `http.request.method`, `http.route`, `http.response.status_code`, `url.scheme`,
 * `server.address` and `server.port` (from `Host`), `user_agent.original`,
 * `network.protocol.version`, plus `petstore.operation`; status ERROR, with `error.type`, only
 * for a 5xx. Never the path as sent. The operation's effects run under the span: give the
 * runtime @effect/opentelemetry's tracer on the same provider and their spans are its children.
 *
 * ```ts
 * import { otelRequestTracing } from "@petstore/http/otel"
 * createApp({ runtime, apiKeys, tracing: otelRequestTracing(provider.getTracer("petstore")) })
 * ```
 */
export const otelRequestTracing = (
  tracer: Tracer,
  options: OtelRequestTracingOptions = {},
): RequestTracing => {
  const { propagator } = options
  const callerContext = (request: IncomingMessage): OtelContext =>
    propagator === undefined
      ? propagation.extract(ROOT_CONTEXT, request.headers)
      : propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter)
  return {
    startRequest: (request, scheme) => {
      const method =
        request.method !== undefined && knownMethods.has(request.method) ? request.method : "_OTHER"
      const span = tracer.startSpan(
        method === "_OTHER" ? "HTTP" : method,
        { kind: SpanKind.SERVER, attributes: requestAttributes(request, method, scheme) },
        callerContext(request),
      )
      return new OtelRequestSpan(span, method === "_OTHER" ? "HTTP" : method)
    },
  }
}
