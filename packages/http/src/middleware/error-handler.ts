import type { ParameterizedContext } from "koa"
import { apiError, respondWithError, type ApiError } from "../vocabulary/api-error.js"
import type { RequestState } from "../vocabulary/request-state.js"

const internalError = apiError("internal_error", "an unexpected error occurred; it was logged")

/** A 4xx that a library threw on purpose (http-errors style: `status` and `expose`). */
const clientErrorOf = (error: unknown): ApiError | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const status = "status" in error ? error.status : undefined
  const expose = "expose" in error ? error.expose : false
  return typeof status === "number" && status >= 400 && status < 500 && expose === true
    ? apiError("bad_request", "the request could not be processed")
    : undefined
}

/**
 * Whatever was thrown below becomes the JSON Error body; headers set on the way
 * (`WWW-Authenticate`, `Allow`, `Deprecation`, `X-Request-Id`) are kept. Unexpected failures are
 * logged with their stack, under the request's id (and recorded on the request's span, when
 * traced), and answered with a 500 that reveals nothing of them.
 */
export const answerThrown = (ctx: ParameterizedContext<RequestState>, error: unknown): void => {
  const clientError = clientErrorOf(error)
  if (clientError === undefined) {
    // The route is named by the access log line that follows, with the same request id.
    ctx.state.log.error(
      { error: error instanceof Error ? (error.stack ?? error.message) : String(error) },
      "request failed unexpectedly",
    )
    ctx.state.span?.recordFailure(error)
  }
  respondWithError(ctx, clientError ?? internalError)
}
