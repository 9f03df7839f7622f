import type { Header, Reference } from "./openapi-types.js"
import escapeRegExp from "escape-string-regexp"

/** RFC 6750 §2.1 b64token: what a bearer token, and so an API key, may be. */
export const bearerTokenPattern = /^[A-Za-z0-9\-._~+/]+=*$/

/** Sent, as `true`, with a create that replays an earlier one with the same `Idempotency-Key`. */
export const idempotentReplayedHeader = "Idempotent-Replayed"

/** Seconds a client should wait before retrying while storage is unavailable or a key in use. */
export const retryAfterSeconds = 1

/** Headers responses carry, as `components.headers`. */
export const headerComponents = (basePath: string) =>
  ({
    WWWAuthenticate: {
      description:
        'The Bearer challenge (RFC 6750): `Bearer realm="petstore"`, with `error="invalid_token"` when a key was sent but is not valid.',
      required: true,
      schema: { type: "string", pattern: '^Bearer realm="petstore"(, error="invalid_token")?$' },
    },
    XRequestId: {
      description:
        "The request's id: the client's own `X-Request-Id` when it is 1 to 128 visible ASCII characters, otherwise one the server made. Every log line about the request names it.",
      required: true,
      schema: { type: "string", pattern: "^[!-~]{1,128}$" },
    },
    RateLimitPolicy: {
      description:
        'The API key\'s rate limit (draft-ietf-httpapi-ratelimit-headers): `"per-key";q=<requests>;w=<seconds>`, a bucket of `q` requests refilled evenly over `w` seconds. Sent on every response to a request whose key was admitted, unless rate limiting is off.',
      required: false,
      schema: { type: "string", pattern: '^"per-key";q=[0-9]+;w=[0-9]+$' },
    },
    RateLimit: {
      description:
        'What is left of the key\'s limit: `"per-key";r=<requests left>;t=<seconds until the next one>`. Sent with `RateLimit-Policy`.',
      required: false,
      schema: { type: "string", pattern: '^"per-key";r=[0-9]+;t=[0-9]+$' },
    },
    Allow: {
      description: "The methods this path allows.",
      required: true,
      schema: { type: "string", pattern: "^[A-Z]+(, [A-Z]+)*$" },
    },
    RetryAfter: {
      description: "Seconds to wait before trying again.",
      required: true,
      schema: { type: "integer", minimum: 0, examples: [retryAfterSeconds] },
    },
    IdempotentReplayed: {
      description:
        "Present, as `true`, when the answer replays what an earlier create with the same `Idempotency-Key` made.",
      required: false,
      schema: { type: "string", const: "true" },
    },
    NextPageLink: {
      description:
        'Present while more animals match: `<…>; rel="next"`, the URI of the next page. Follow it unchanged.',
      required: false,
      schema: {
        type: "string",
        pattern: `^<${escapeRegExp(basePath)}/pets\\?[^>]*cursor=[^>]+>; rel="next"$`,
      },
    },
    Location: {
      description: "The path of the new animal.",
      required: true,
      schema: {
        type: "string",
        format: "uri-reference",
        pattern: `^${escapeRegExp(basePath)}/pets/[1-9][0-9]*$`,
      },
    },
  }) satisfies Record<string, Header>

export type HeaderName = keyof ReturnType<typeof headerComponents>

export const headerRef = (name: HeaderName): Reference => ({
  $ref: `#/components/headers/${name}`,
})
