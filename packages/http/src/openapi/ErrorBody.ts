import { Schema } from "effect"

/** The body of every error response (the spec's Error), as `respondWithError` writes it. */
export const ErrorBody = Schema.Struct({
  code: Schema.String.annotations({ description: "Machine-readable error code." }),
  message: Schema.String.annotations({ description: "Human-readable description." }),
  status: Schema.Number.pipe(
    Schema.int(),
    Schema.between(400, 599),
    Schema.annotations({ description: "The HTTP status code of the response." }),
  ),
}).annotations({
  identifier: "Error",
  description: "What went wrong; `status` always equals the response's HTTP status.",
})
export type ErrorBody = typeof ErrorBody.Type
