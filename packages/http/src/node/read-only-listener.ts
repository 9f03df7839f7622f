import type { IncomingMessage, RequestListener, ServerResponse } from "node:http"
import { apiError, type ApiError } from "../vocabulary/api-error.js"
import { requestIdFor } from "../request/request-id.js"
import { writeError } from "./error-reply.js"

const allowed = "GET, HEAD"

/** The id the request is answered with: its own `X-Request-Id` when acceptable, else a new one. */
export const requestIdOf = (request: IncomingMessage): string =>
  requestIdFor(request.headers["x-request-id"])

/** Answers with the Error body, under the request's id. */
export const replyWithError = (
  request: IncomingMessage,
  response: ServerResponse,
  error: ApiError,
  headers: Readonly<Record<string, string>> = {},
): void => writeError(response, error, requestIdOf(request), headers)

/**
 * A listener for a port that serves a few paths to be read, as the metrics and probe ports do:
 * `GET` and `HEAD` of `paths` go to `answer` (the query ignored), any other method there is 405
 * with `Allow`, any other path 404, both with the Error body.
 */
export const readOnlyListener =
  <Path extends string>(
    paths: ReadonlyArray<Path>,
    answer: (path: Path, request: IncomingMessage, response: ServerResponse) => void,
  ): RequestListener =>
  (request, response) => {
    const asked = (request.url ?? "").split("?", 1)[0] ?? ""
    const path = paths.find((served) => served === asked)
    if (path === undefined) {
      return replyWithError(request, response, apiError("not_found", `nothing is at ${asked}`))
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      return replyWithError(
        request,
        response,
        apiError(
          "method_not_allowed",
          `${request.method ?? ""} is not allowed on ${path}; allowed: ${allowed}`,
        ),
        { Allow: allowed },
      )
    }
    answer(path, request, response)
  }
