import { STATUS_CODES, type OutgoingHttpHeaders, type ServerResponse } from "node:http"
import { errorBodyText, jsonContentType, type ApiError } from "../vocabulary/api-error.js"
import { requestIdHeader } from "../request/request-id.js"

/** The headers of a JSON body the server writes itself, past Koa (the app's go through it). */
const jsonHeaders = (body: string, requestId: string) => ({
  "Content-Type": jsonContentType,
  "Content-Length": Buffer.byteLength(body),
  "X-Content-Type-Options": "nosniff",
  [requestIdHeader]: requestId,
})

/** Answers `response` with a JSON body and the headers given; a HEAD gets the head alone. */
export const writeJson = (
  response: ServerResponse,
  status: number,
  body: string,
  requestId: string,
  headers: OutgoingHttpHeaders = {},
): void => {
  response.writeHead(status, { ...headers, ...jsonHeaders(body, requestId) })
  response.end(response.req.method === "HEAD" ? undefined : body)
}

/** Answers `response` with `error` and the headers given; a HEAD gets the head alone. */
export const writeError = (
  response: ServerResponse,
  error: ApiError,
  requestId: string,
  headers: OutgoingHttpHeaders = {},
): void => writeJson(response, error.status, errorBodyText(error), requestId, headers)

/**
 * The whole of a response answering `error`, as bytes for a socket no request could be read
 * from; it closes the connection.
 */
export const rawErrorResponse = (error: ApiError, requestId: string): string => {
  const body = errorBodyText(error)
  const head = Object.entries({ ...jsonHeaders(body, requestId), Connection: "close" })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? error.code}\r\n${head}\r\n${body}`
}
