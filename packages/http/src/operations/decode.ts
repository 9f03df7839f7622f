import { Either, ParseResult, Schema } from "effect"
import { schemaCodec } from "../codecs/schema-codec.js"
import { apiError, type ApiError } from "../vocabulary/api-error.js"
import type { ErrorCode } from "../vocabulary/error-catalogue.js"

/** "name is missing; categoryId must be an integer …": the first issue of each field. */
const describeIssues = (error: ParseResult.ParseError): string => {
  const byField = new Map<string, string>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const field = issue.path.join(".")
    if (!byField.has(field))
      byField.set(field, field === "" ? issue.message : `${field} ${issue.message}`)
  }
  return [...byField.values()].join("; ")
}

/**
 * Decodes request input with a schema; a failure becomes a 400 whose message names each
 * offending field. `onExcessProperty: "ignore"` drops unknown properties instead of refusing.
 * Input the schema's compiled decoder takes plainly skips the parser, with the same result.
 */
export const decodeRequest = <A, I>(schema: Schema.Schema<A, I>, code: ErrorCode) => {
  const { decodePlain } = schemaCodec(schema)
  const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })
  return (input: unknown): Either.Either<A, ApiError> => {
    const plain = decodePlain(input)
    return plain === undefined
      ? Either.mapLeft(decode(input), (error) => apiError(code, describeIssues(error)))
      : Either.right(plain)
  }
}
