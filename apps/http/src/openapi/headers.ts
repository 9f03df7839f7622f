import { retryAfterSeconds } from "../api/domain-errors.js"
import type { Header, Reference } from "./openapi-types.js"
import { escapeRegExp } from "../escape-regexp.js"

/** Headers responses carry, as `components.headers`. */
export const headerComponents = (basePath: string) =>
  ({
    WWWAuthenticate: {
      description:
        'The Bearer challenge (RFC 6750): `Bearer realm="petstore"`, with `error="invalid_token"` when a key was sent but is not valid.',
      required: true,
      schema: { type: "string", pattern: '^Bearer realm="petstore"(, error="invalid_token")?$' },
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
