import type { IncomingMessage } from "node:http"
import { Either } from "effect"
import type { Context } from "koa"
import { apiError, type ApiError } from "../vocabulary/api-error.js"
import { LRUCache } from "lru-cache"
import { maxBodyBytes, maxJsonDepth } from "../vocabulary/body-limits.js"
import { fractionalMembers, mayWriteFractions } from "./json-integers.js"
import { readBodyText, type BodyFault } from "./read-body-text.js"

const bodyRequired = apiError(
  "invalid_body",
  'a JSON object body is required, for example {"name": "Rex", "categoryId": 1}',
)
const tooLarge = apiError("payload_too_large", `the body exceeds ${maxBodyBytes} bytes`)
const tooDeep = apiError(
  "invalid_json",
  `the body nests arrays and objects more than ${maxJsonDepth} deep; send a flatter document`,
)
const unsupported = (message: string) => apiError("unsupported_media_type", message)

const faults: Readonly<Record<BodyFault, ApiError>> = {
  too_large: tooLarge,
  shorter_than_declared: apiError("invalid_body", "the body is shorter than its Content-Length"),
  // Nobody reads this answer; it keeps a client that hung up mid-body out of the error log.
  cut_off: apiError("invalid_body", "the connection closed before the whole body arrived"),
  not_utf8: apiError("invalid_json", "the body is not valid UTF-8; send JSON encoded as UTF-8"),
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

/** Why the media type rules the body out, if it does; the request is known to have a body. */
const refuseByContentType = (ctx: Context): ApiError | undefined => {
  if (!ctx.is("application/json", "+json")) {
    return unsupported("the body must be sent as Content-Type: application/json")
  }
  const charset = ctx.request.charset.toLowerCase()
  return charset !== "" && charset !== "utf-8" && charset !== "utf8"
    ? unsupported(`charset ${charset} is not supported; send UTF-8`)
    : undefined
}

// Parsing the media type is most of the cost of the header checks, and clients send the same
// few: each distinct Content-Type is judged once, the 100 most recent kept, none longer than 256
// characters. "acceptable" stands for no refusal, as the cache cannot keep `undefined`.
const longestTypeKept = 256
const contentTypeVerdicts = new LRUCache<string, ApiError | "acceptable">({
  max: 100,
  maxSize: 100 * longestTypeKept,
  maxEntrySize: longestTypeKept,
  sizeCalculation: (_verdict, type) => Math.max(1, type.length),
})

const verdictOn = (ctx: Context): ApiError | "acceptable" => {
  const type = ctx.get("Content-Type")
  const known = contentTypeVerdicts.get(type)
  if (known !== undefined) return known
  const verdict = refuseByContentType(ctx) ?? "acceptable"
  contentTypeVerdicts.set(type, verdict)
  return verdict
}

/** Why the request's headers rule its body out, if they do. */
const refuseByHeaders = (ctx: Context): ApiError | undefined => {
  const length = ctx.request.length
  if (length === 0 || (length === undefined && ctx.get("Transfer-Encoding") === "")) {
    return bodyRequired
  }
  const verdict = verdictOn(ctx)
  if (verdict !== "acceptable") return verdict
  const encoding = ctx.get("Content-Encoding").toLowerCase()
  if (encoding !== "" && encoding !== "identity") {
    return unsupported(`Content-Encoding ${encoding} is not supported; send the body unencoded`)
  }
  return length !== undefined && length > maxBodyBytes ? tooLarge : undefined
}

/**
 * The body fields an integer is required in (NewPet's `categoryId`; a test holds this to the
 * schema).
 */
export const integerFields: ReadonlySet<string> = new Set(["categoryId"])

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * JSON.parse reads `1.0`, `1e0` and `9007199254740990.6` as the integers 1, 1 and
 * 9007199254740991, which an integer field would then take: rounded, or not sent as an integer
 * at all. A number written with a fraction or an exponent is not an integer, whatever it parses
 * to, so in an integer field it is kept as the text the client wrote. No integer schema takes a
 * string: the schema refuses it in its own words, beside whatever else it finds wrong.
 */
const keepFractionsAsWritten = (text: string, value: unknown): unknown => {
  if (!isJsonObject(value)) return value
  for (const [field, literal] of fractionalMembers(text, integerFields)) value[field] = literal
  return value
}

/** A body's text as JSON, or why it is not JSON this service reads. */
export const parseJsonText = (text: string): Either.Either<unknown, ApiError> => {
  if (text.trim() === "") return Either.left(bodyRequired)
  if (nestsDeeperThan(text, maxJsonDepth)) return Either.left(tooDeep)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : "it could not be parsed"
    return Either.left(apiError("invalid_json", `the body is not valid JSON: ${reason}`))
  }
  // Most bodies write no fraction or exponent anywhere; only those that may are looked at closer.
  return Either.right(mayWriteFractions(text) ? keepFractionsAsWritten(text, value) : value)
}

/**
 * Whether a parsed value nests arrays and objects deeper than `limit` (a top-level object is 1
 * deep, as in `nestsDeeperThan`). The walk goes no deeper than `limit + 1` and visits each
 * object once, so no value, however deep or self-referencing, costs more than its size.
 */
const valueNestsDeeperThan = (value: unknown, limit: number): boolean => {
  const seen = new Set<object>()
  const pending: Array<readonly [unknown, number]> = [[value, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [current, depth] = next
    if (typeof current !== "object" || current === null || seen.has(current)) continue
    if (depth > limit) return true
    seen.add(current)
    for (const member of Object.values(current)) pending.push([member, depth + 1])
  }
  return false
}

/**
 * The checks `parseJsonText` makes, on a value a middleware in front of the app parsed, when its
 * text was not kept: nesting (on the value), then size (the value written back as JSON, which
 * is what the text was, give or take its whitespace and how it wrote numbers and escapes).
 *
 * What cannot be checked without the text: a number written with a fraction or an exponent in
 * an integer field (`"categoryId": 1.0` parsed as 1 is taken as 1), and bytes that were not
 * UTF-8 (the parser decided what became of them).
 */
const checkParsedValue = (value: unknown): Either.Either<unknown, ApiError> => {
  if (valueNestsDeeperThan(value, maxJsonDepth)) return Either.left(tooDeep)
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    json = undefined
  }
  if (json === undefined) {
    return Either.left(apiError("invalid_json", "the body did not parse as JSON"))
  }
  return Buffer.byteLength(json) > maxBodyBytes ? Either.left(tooLarge) : Either.right(value)
}

/**
 * Whether something in front of the app has read from the request (a host's body parser).
 * Not `complete`: that says the whole message has arrived, which a small body has before anyone
 * reads it.
 */
const readBefore = (request: IncomingMessage): boolean =>
  request.readableDidRead || request.readableEnded

// Asking for the body again would wait for an `end` that has been and gone.
const bodyTaken = apiError(
  "internal_error",
  "the body was read by a middleware in front of this service, which kept nothing of it",
)

/**
 * The body a middleware in front of the app read, as the names @koa/bodyparser and
 * koa-bodyparser keep it under: the text in `ctx.request.rawBody` (JSON types only), the value
 * in `ctx.request.body`. The text, when there is one, goes through `parseJsonText`: the verdict
 * is the one the app gives the same text read by itself, whatever the host's parser accepts or
 * revives. Only when there is no text is the parsed value used, with what can be checked on it.
 */
const bodyReadBefore = (request: Context["request"]): Either.Either<unknown, ApiError> => {
  const text: unknown = "rawBody" in request ? request.rawBody : undefined
  if (typeof text === "string") {
    // The text as decoded: a byte-order mark dropped, bytes that were not UTF-8 replaced.
    return Buffer.byteLength(text) > maxBodyBytes ? Either.left(tooLarge) : parseJsonText(text)
  }
  const value: unknown = "body" in request ? request.body : undefined
  return value === undefined ? Either.left(bodyTaken) : checkParsedValue(value)
}

/**
 * Reads the request body as JSON: `application/json` (or `+json`) in UTF-8, not content-encoded,
 * at most 1 MiB. What the client got wrong, or a body cut off, becomes a 4xx. When a middleware
 * in front of the app (a host's body parser) has read the body already, what it kept is used
 * and checked the same way (`bodyReadBefore`); the request is never read twice.
 */
export const readJsonBody = async (ctx: Context): Promise<Either.Either<unknown, ApiError>> => {
  const refused = refuseByHeaders(ctx)
  if (refused) return Either.left(refused)
  if (readBefore(ctx.req)) return bodyReadBefore(ctx.request)
  const read = await readBodyText(ctx.req, maxBodyBytes, ctx.request.length)
  return Either.isLeft(read) ? Either.left(faults[read.left]) : parseJsonText(read.right)
}
