import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http"
import type { Duplex } from "node:stream"
import { apiError, errorBodyText, type ApiError } from "./api-error.js"
import { closeAfterPendingAnswer, endAndCut, trackPendingAnswers } from "./connection-closing.js"
import { newRequestId, requestIdFor, requestIdHeader } from "./observability/request-id.js"

/** How long a client may take, and how many may be connected at once. */
export interface ConnectionLimits {
  /** To send the request line and headers; slower clients get 408. */
  readonly headersTimeoutMs: number
  /** To send the whole request, body included; slower clients get 408. */
  readonly requestTimeoutMs: number
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number
  /** Connections open at once; more are refused at accept. */
  readonly maxConnections: number
}

export const defaultConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 10_000,
}

/** Node checks the timeouts above this often; its default (30 s) would let them overrun by as much. */
const timeoutCheckIntervalMs = 1_000

// The request could not be read, so its own X-Request-Id is not known: the reply names a new one.
const rawReply = (error: ApiError) => {
  const body = errorBodyText(error)
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? error.code}\r\n` +
    `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Content-Type-Options: nosniff\r\n` +
    `${requestIdHeader}: ${newRequestId()}\r\n` +
    `Connection: close\r\n\r\n${body}`
  )
}

/** Node's own answer to a request it could not parse is plain text; make it the Error body. */
const answerClientError = (error: Error & { code?: string }, socket: Duplex) => {
  if (!socket.writable) return socket.destroy()
  if (closeAfterPendingAnswer(socket)) return
  const reply =
    error.code === "HPE_HEADER_OVERFLOW"
      ? apiError("headers_too_large", "the request headers are too large")
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? apiError("request_timeout", "the request took too long to arrive")
        : apiError("bad_request", "the request is not valid HTTP")
  endAndCut(socket, rawReply(reply))
}

const respond = (response: ServerResponse, error: ApiError) => {
  const body = errorBodyText(error)
  response.writeHead(error.status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff",
    [requestIdHeader]: requestIdFor(response.req.headers["x-request-id"]),
    Connection: "close",
  })
  response.end(body)
}

/** An `Expect` other than `100-continue`, which Node would refuse itself with an empty 417. */
const answerExpectation = (request: IncomingMessage, response: ServerResponse) =>
  respond(
    response,
    apiError(
      "expectation_failed",
      `Expect: ${request.headers.expect ?? ""} is not supported; only 100-continue is`,
    ),
  )

/**
 * `CONNECT` asks for a tunnel: Node hands the socket to a listener or, without one, drops it
 * without a word. A socket handed over has lost Node's error handler and timeouts (and
 * `closeAllConnections` skips it): errors are handled here, and what the client still sends is
 * read and dropped so that its close is seen.
 */
const refuseTunnel = (_request: IncomingMessage, socket: Duplex) => {
  socket.on("error", () => socket.destroy())
  socket.resume()
  if (closeAfterPendingAnswer(socket)) return
  endAndCut(
    socket,
    rawReply(apiError("bad_request", "CONNECT is not supported: this is not a proxy")),
  )
}

/** HTTP/1.1 requires `Host` (RFC 9112 §3.2); Node would refuse its absence with an empty 400. */
const requireHost =
  (handler: RequestListener): RequestListener =>
  (request, response) => {
    if (request.httpVersion === "1.1" && request.headers.host === undefined) {
      return respond(response, apiError("bad_request", "the Host header is required"))
    }
    handler(request, response)
  }

/**
 * An HTTP server for `app.callback()` that answers every request with the Error body, also
 * those Node would answer itself (malformed, oversized, too slow, a missing `Host`, an `Expect`
 * it cannot meet), and that does not let slow clients hold it.
 */
export const createAppServer = (
  handler: RequestListener,
  limits: ConnectionLimits = defaultConnectionLimits,
): Server => {
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: timeoutCheckIntervalMs,
    },
    trackPendingAnswers(requireHost(handler)),
  )
  server.maxConnections = limits.maxConnections
  server.on("clientError", answerClientError)
  server.on("checkExpectation", answerExpectation)
  server.on("connect", refuseTunnel)
  return server
}

/** Listens on an address; resolves with the port once listening (useful with port 0). */
export const listen = (server: Server, port: number, host: string): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      const address = server.address()
      resolve(typeof address === "object" && address !== null ? address.port : port)
    })
  })

/**
 * Stops accepting connections and resolves once in-flight requests have finished, or after
 * `graceMs`, when connections still open are cut. Keep-alive connections are closed as soon as
 * they fall idle, so a client holding one does not delay the exit.
 */
export const closeGracefully = (server: Server, graceMs: number): Promise<void> =>
  new Promise((resolve) => {
    const closeIdle = setInterval(() => server.closeIdleConnections(), 50)
    const force = setTimeout(() => server.closeAllConnections(), graceMs)
    server.close(() => {
      clearInterval(closeIdle)
      clearTimeout(force)
      resolve()
    })
    server.closeIdleConnections()
  })
