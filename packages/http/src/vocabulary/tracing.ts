import type { IncomingMessage } from "node:http"
import type { Tracer } from "effect"

/** A value a span attribute or event attribute may hold. */
export type SpanValue = string | number | boolean

export type SpanAttributes = Readonly<Record<string, SpanValue>>

/** How a traced request was answered, told to its span as it ends. */
export interface RequestOutcome {
  /**
   * The route template as the client reaches it (`/v1/pets/{petId}`, `/petstore/v1/pets` under
   * koa-mount at `/petstore`), or undefined when no route knows the path. Never the path as sent.
   */
  readonly route: string | undefined
  /** The operation id, when an operation answered. */
  readonly operation: string | undefined
  readonly status: number
}

/**
 * The SERVER span of one request. The app tells it what it decided (attributes, events, a
 * failure) and ends it once the answer is known; the operation's effects run under `parent`.
 *
 * What the app tells it, besides the outcome:
 * - `petstore.key_id`: the admitted key's id (`env:1`, `key_…`), never the key;
 * - event `petstore.auth`, with `petstore.auth.outcome`: `admitted`, `missing`, `malformed`,
 *   `wrong` (no key), `unknown` (a stored key's shape the store does not know), `deferred` (not
 *   looked up: too many look-ups in flight) or `unavailable` (the store could not say);
 * - event `petstore.rate_limit.refused`, with `petstore.rate_limit.scope` (`key`, `address` or
 *   `lookups`) and `petstore.rate_limit.retry_after` (seconds, as `Retry-After`);
 * - `petstore.idempotency.replayed`: true when a create replays an earlier one;
 * - the failure behind a 500 (what was thrown) or a 503 (what storage failed with).
 */
export interface RequestSpan {
  /** The span as Effect sees it: what the use case's span is a child of. */
  readonly parent: Tracer.AnySpan
  /** Lower-case hex, as W3C `traceparent` and the logs write them. */
  readonly traceId: string
  readonly spanId: string
  readonly setAttribute: (name: string, value: SpanValue) => void
  readonly addEvent: (name: string, attributes?: SpanAttributes) => void
  /** The failure behind a 5xx, recorded as an exception event; the status follows at `end`. */
  readonly recordFailure: (cause: unknown) => void
  /** Names the span by its route, sets the HTTP status (ERROR only for a 5xx) and ends it. */
  readonly end: (outcome: RequestOutcome) => void
}

/**
 * Starts the span of each request the app receives, a child of the caller's span when the
 * request carries one (`traceparent`). Given to `createApp`; without it nothing is traced and
 * nothing is paid.
 */
export interface RequestTracing {
  /**
   * Called first thing for every request, public routes and unknown paths included; `scheme` is
   * how the client reached the server (`https` behind a proxy the host trusts, `app.proxy`).
   */
  readonly startRequest: (request: IncomingMessage, scheme: "http" | "https") => RequestSpan
}
