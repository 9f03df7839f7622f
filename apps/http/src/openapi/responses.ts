import { maxBodyBytes } from "../json-body.js"
import { headerRef } from "./headers.js"
import { componentRef } from "./json-schema.js"
import type { Header, JsonSchema, Reference, Response } from "./openapi-types.js"

type Headers = Readonly<Record<string, Header | Reference>>

export const jsonContent = (schema: JsonSchema) => ({ "application/json": { schema } })

/** An Error response whose `code` is one of `codes`. */
export const errorResponse = (
  status: number,
  description: string,
  codes: ReadonlyArray<string>,
  headers: Headers = {},
): Response => ({
  description,
  ...(Object.keys(headers).length > 0 ? { headers } : {}),
  content: jsonContent({
    allOf: [
      componentRef("Error"),
      {
        properties: {
          code: { type: "string", enum: [...codes] },
          status: { type: "integer", const: status },
        },
      },
    ],
  }),
})

/** The same response carrying `headers` as well. */
export const withHeaders = (
  { description, headers, content }: Response,
  more: Headers,
): Response => ({
  description,
  headers: { ...headers, ...more },
  ...(content === undefined ? {} : { content }),
})

/** The errors every operation can answer with. */
export const commonErrors = {
  401: errorResponse(
    401,
    "No API key was sent, the `Authorization` header is not of the form `Bearer <key>`, or the key is not valid. Decided before anything else about the request.",
    ["unauthorized"],
    { "WWW-Authenticate": headerRef("WWWAuthenticate") },
  ),
  405: errorResponse(
    405,
    "Sent with a method this path does not allow; `Allow` lists those it does.",
    ["method_not_allowed"],
    { Allow: headerRef("Allow") },
  ),
  500: errorResponse(500, "An unexpected failure; it was logged.", ["internal_error"]),
  503: errorResponse(
    503,
    "Storage is unavailable; try again after `Retry-After` seconds.",
    ["storage_unavailable"],
    { "Retry-After": headerRef("RetryAfter") },
  ),
} satisfies Record<number, Response>

/** The errors of an operation that reads a request body. */
export const bodyErrors = {
  413: errorResponse(413, `The body is larger than ${maxBodyBytes} bytes.`, ["payload_too_large"]),
  415: errorResponse(
    415,
    "The body is not sent as `Content-Type: application/json` in UTF-8 without `Content-Encoding`.",
    ["unsupported_media_type"],
  ),
} satisfies Record<number, Response>
