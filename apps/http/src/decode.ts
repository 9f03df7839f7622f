import { Either, ParseResult, Schema } from "effect"
import { apiError, type ApiError } from "./api-error.js"

/** "name is missing; categoryId must be an integer …": each issue with the field it is about. */
const describeIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => {
      const field = issue.path.join(".")
      return field === "" ? issue.message : `${field} ${issue.message}`
    })
    .join("; ")

/**
 * Decodes request input with a schema; a failure becomes a 400 whose message names each
 * offending field. `onExcessProperty: "ignore"` drops unknown properties instead of refusing.
 */
export const decodeRequest =
  <A, I>(schema: Schema.Schema<A, I>, code: string) =>
  (input: unknown): Either.Either<A, ApiError> =>
    Either.mapLeft(
      Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(input),
      (error) => apiError(400, code, describeIssues(error)),
    )
