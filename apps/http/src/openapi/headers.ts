import { storageRetryAfterSeconds } from "../error-mapping.js"
import type { Header, Reference } from "./openapi-types.js"
import { escapeRegExp } from "../escape-regexp.js"

/** When a deprecated operation stopped being recommended and when it goes away. */
export interface DeprecationDates {
  readonly since: Date
  readonly sunset: Date
}

export interface HeaderInput {
  readonly basePath: string
  readonly getPetDeprecation: DeprecationDates
}

/** Headers several responses carry, as `components.headers`. */
export const headerComponents = ({ basePath, getPetDeprecation }: HeaderInput) =>
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
      schema: { type: "integer", minimum: 0, examples: [storageRetryAfterSeconds] },
    },
    Deprecation: {
      description:
        "When this operation was deprecated (RFC 9745): `@` and seconds since 1970-01-01T00:00:00Z.",
      required: true,
      schema: { type: "string", const: `@${Math.floor(getPetDeprecation.since.getTime() / 1000)}` },
    },
    Sunset: {
      description: "When this operation will be removed (RFC 8594).",
      required: true,
      schema: { type: "string", const: getPetDeprecation.sunset.toUTCString() },
    },
    SuccessorVersionLink: {
      description: "What replaces this operation (RFC 8288 `successor-version`).",
      required: true,
      schema: { type: "string", const: `<${basePath}/pets>; rel="successor-version"` },
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
