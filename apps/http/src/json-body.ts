import { Either } from "effect"
import type { Context } from "koa"
import getRawBody from "raw-body"
import { apiError, type ApiError } from "./api-error.js"
import { maxBodyBytes, maxJsonDepth } from "./api/limits.js"

const bodyRequired = apiError(
  "invalid_body",
  'a JSON object body is required, for example {"name": "Rex", "categoryId": 1}',
)
const tooLarge = apiError("payload_too_large", `the body exceeds ${maxBodyBytes} bytes`)
const unsupported = (message: string) => apiError("unsupported_media_type", message)

/** The ApiError for a raw-body failure the client caused, by raw-body's `type`. */
const readFailure = (error: unknown): ApiError | undefined => {
  const type =
    typeof error === "object" && error !== null && "type" in error ? error.type : undefined
  switch (type) {
    case "entity.too.large":
      return tooLarge
    case "request.size.invalid":
      return apiError("invalid_body", "the body is shorter than its Content-Length")
    default:
      return undefined
  }
}

const quote = 0x22
const backslash = 0x5c
const openBracket = 0x5b
const closeBracket = 0x5d
const openBrace = 0x7b
const closeBrace = 0x7d

/**
 * Whether JSON text nests arrays and objects deeper than `limit`, found by one pass over the
 * text (outside strings, `[`/`{` open and `]`/`}` close) before anything recurses into it:
 * JSON.parse copes with deep nesting, but whatever walks the value next might not.
 */
export const nestsDeeperThan = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let index = 0; index < text.length; index++) {
    const char = text.charCodeAt(index)
    if (inString) {
      if (char === backslash) index++
      else if (char === quote) inString = false
    } else if (char === quote) {
      inString = true
    } else if (char === openBracket || char === openBrace) {
      if (++depth > limit) return true
    } else if (char === closeBracket || char === closeBrace) {
      depth--
    }
  }
  return false
}

/** Why the request's headers rule its body out, if they do. */
const refuseByHeaders = (ctx: Context): ApiError | undefined => {
  const length = ctx.request.length
  if (length === 0 || (length === undefined && ctx.get("Transfer-Encoding") === "")) {
    return bodyRequired
  }
  if (!ctx.is("application/json", "+json")) {
    return unsupported("the body must be sent as Content-Type: application/json")
  }
  const charset = ctx.request.charset.toLowerCase()
  if (charset !== "" && charset !== "utf-8" && charset !== "utf8") {
    return unsupported(`charset ${charset} is not supported; send UTF-8`)
  }
  const encoding = ctx.get("Content-Encoding").toLowerCase()
  if (encoding !== "" && encoding !== "identity") {
    return unsupported(`Content-Encoding ${encoding} is not supported; send the body unencoded`)
  }
  return length !== undefined && length > maxBodyBytes ? tooLarge : undefined
}

/**
 * Reads the request body as JSON: `application/json` (or `+json`) in UTF-8, not content-encoded,
 * at most 1 MiB. What the client got wrong becomes a 4xx; anything else (a connection that
 * broke mid-body) is rethrown for the error handler.
 */
export const readJsonBody = async (ctx: Context): Promise<Either.Either<unknown, ApiError>> => {
  const refused = refuseByHeaders(ctx)
  if (refused) return Either.left(refused)
  let text: string
  try {
    text = await getRawBody(ctx.req, {
      limit: maxBodyBytes,
      length: ctx.request.length,
      encoding: "utf-8",
    })
  } catch (error) {
    const failure = readFailure(error)
    if (failure) return Either.left(failure)
    throw error
  }
  if (text.trim() === "") return Either.left(bodyRequired)
  if (nestsDeeperThan(text, maxJsonDepth)) {
    return Either.left(
      apiError(
        "invalid_json",
        `the body nests arrays and objects more than ${maxJsonDepth} deep; send a flatter document`,
      ),
    )
  }
  try {
    const value: unknown = JSON.parse(text)
    return Either.right(value)
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : "it could not be parsed"
    return Either.left(apiError("invalid_json", `the body is not valid JSON: ${reason}`))
  }
}
