import { Record } from "effect"
import type { HeaderName } from "./headers.js"
import { maxBodyBytes, maxJsonDepth } from "./body-limits.js"

/** What one error code means: the HTTP status it is answered with, when, and the headers it carries. */
export interface ErrorEntry {
  readonly status: number
  /**
   * Who answers it: an operation's own route (after its deprecation headers), the router (no
   * route for the path or the method), or the edge before any route (Node could not read the
   * request, its target cannot be routed, or admission control refused it).
   */
  readonly origin: "operation" | "router" | "node"
  /**
   * Whether it may be answered once the key check admitted the request, and so carry the key's
   * `RateLimit-Policy` and `RateLimit` (when rate limiting is on): true of every answer given
   * after the check, the router's included, false of the check's own 401 and of Node's replies.
   */
  readonly afterAdmission: boolean
  /** When a client gets it, as the README and the OpenAPI document say. */
  readonly when: string
  /** Headers every response with this code carries, by their `components.headers` name. */
  readonly headers?: Readonly<Record<string, HeaderName>>
}

/**
 * Every error code the service answers with. The middleware, the routes, Node's own replies,
 * the OpenAPI document and the README's table all read it; a code not listed here cannot be sent.
 */
export const errorCatalogue = {
  bad_request: {
    status: 400,
    origin: "node",
    afterAdmission: false,
    when: "The request is not valid HTTP/1.x: Node could not parse it, its request line names another version (`HTTP/2.0`, `HTTP/0.9`), an HTTP/1.1 request has no `Host` or any request has two, an HTTP/1.0 request has `Transfer-Encoding`, it is a `CONNECT` (this is not a proxy), or its target has a fragment (`#`) or is a URL that cannot be parsed.",
  },
  invalid_query: {
    status: 400,
    origin: "operation",
    afterAdmission: true,
    when: "A query parameter is not valid or is given more than once: `limit` outside 1..100 or not an integer, `status` not one of the values, or a `cursor` that is not a cursor.",
  },
  invalid_path_parameter: {
    status: 400,
    origin: "operation",
    afterAdmission: true,
    when: "`petId` is not a positive integer of at most 2^53 − 1.",
  },
  invalid_json: {
    status: 400,
    origin: "operation",
    afterAdmission: true,
    when: `The body is not valid JSON, or nests arrays and objects more than ${maxJsonDepth} deep.`,
  },
  invalid_body: {
    status: 400,
    origin: "operation",
    afterAdmission: true,
    when: "The body is missing or is not a NewPet: a required field is absent or a value is not valid.",
  },
  invalid_idempotency_key: {
    status: 400,
    origin: "operation",
    afterAdmission: true,
    when: '`Idempotency-Key` is empty, longer than 255 characters, has a character other than visible ASCII (or `"` or `\\` inside the quotes), or is sent twice.',
  },
  unauthorized: {
    status: 401,
    origin: "operation",
    afterAdmission: false,
    when: "No API key, an `Authorization` header not of the form `Bearer <key>`, or a key that is not valid. Decided before anything else about the request.",
    headers: { "WWW-Authenticate": "WWWAuthenticate" },
  },
  pet_not_found: {
    status: 404,
    origin: "operation",
    afterAdmission: true,
    when: "No animal has the requested id.",
  },
  not_found: {
    status: 404,
    origin: "router",
    afterAdmission: true,
    when: "Nothing is at this path (asked with a valid key; without one the answer is 401).",
  },
  method_not_allowed: {
    status: 405,
    origin: "router",
    afterAdmission: true,
    when: "The path does not allow this method; `Allow` lists those it does.",
    headers: { Allow: "Allow" },
  },
  request_timeout: {
    status: 408,
    origin: "node",
    afterAdmission: false,
    when: "The request took too long to arrive.",
  },
  idempotency_key_in_use: {
    status: 409,
    origin: "operation",
    afterAdmission: true,
    when: "A create with this `Idempotency-Key` is still in flight; retry after `Retry-After` seconds to get its answer.",
    headers: { "Retry-After": "RetryAfter" },
  },
  payload_too_large: {
    status: 413,
    origin: "operation",
    afterAdmission: true,
    when: `The body is larger than ${maxBodyBytes} bytes (1 MiB), announced or streamed.`,
  },
  unsupported_media_type: {
    status: 415,
    origin: "operation",
    afterAdmission: true,
    when: "The body is not sent as `Content-Type: application/json` (or a `+json` type) in UTF-8 without `Content-Encoding`.",
  },
  expectation_failed: {
    status: 417,
    origin: "node",
    afterAdmission: false,
    when: "The request has an `Expect` header other than `100-continue`.",
  },
  idempotency_key_reused: {
    status: 422,
    origin: "operation",
    afterAdmission: true,
    when: "This `Idempotency-Key` was already used, with this API key, to create a different animal.",
  },
  rate_limited: {
    status: 429,
    origin: "operation",
    afterAdmission: true,
    when: "Too many requests: the API key has used up its rate limit (`RateLimit` shows what is left), or a key that is not valid came from a client address past its budget of wrong keys, or while the server is checking as many unrecognised keys as it may. A valid key is never refused for other requests' failures. Retry after `Retry-After` seconds.",
    headers: { "Retry-After": "RetryAfter" },
  },
  headers_too_large: {
    status: 431,
    origin: "node",
    afterAdmission: false,
    when: "The request line or headers are too large (over 16 KiB), a very long URL included.",
  },
  internal_error: {
    status: 500,
    origin: "operation",
    afterAdmission: true,
    when: "An unexpected failure (a bug); it is logged, and nothing of it reaches the client.",
  },
  storage_unavailable: {
    status: 503,
    origin: "operation",
    afterAdmission: true,
    when: "Storage cannot answer now (down, busy or timed out); try again after `Retry-After` seconds.",
    headers: { "Retry-After": "RetryAfter" },
  },
  shutting_down: {
    status: 503,
    origin: "operation",
    afterAdmission: false,
    when: "`GET /readyz` only: the process is shutting down (`SIGTERM` or `SIGINT`), so a load balancer should stop sending it requests; it still answers them until it stops accepting connections.",
    headers: { "Retry-After": "RetryAfter" },
  },
  overloaded: {
    status: 503,
    origin: "node",
    afterAdmission: false,
    when: "The server is overloaded: this request waited too long to be read and was refused before any of it was done (no key check, no storage). Retry after `Retry-After` seconds, or elsewhere. Never the answer of `/healthz` and `/readyz`. Behind the shipped nginx configuration, nginx answers it too, when no instance took the request (each had its `max_conns` requests, or was out).",
    headers: { "Retry-After": "RetryAfter" },
  },
} as const satisfies Record<string, ErrorEntry>

export type ErrorCode = keyof typeof errorCatalogue

/** Every code, in the catalogue's order (by status). */
export const errorCodes: ReadonlyArray<ErrorCode> = Record.keys(errorCatalogue)

export const errorEntry = (code: ErrorCode): ErrorEntry => errorCatalogue[code]
