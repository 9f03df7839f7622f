import {
  createServer as createNodeServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from "node:http"
import type { Duplex } from "node:stream"
import type Koa from "koa"
import { apiError, type ApiError } from "../vocabulary/api-error.js"
import { newRequestId, requestIdFor } from "../request/request-id.js"
import {
  AppServerResponse,
  boundUnwantedBodies,
  closeAfterAnswer,
  closeAfterPendingAnswer,
  endAndCut,
  firstParseError,
  runNothingAfterLastAnswer,
  trackPendingAnswers,
} from "./connection-closing.js"
import { limitConnectionsPerAddress, reportDroppedConnections } from "./connection-limits.js"
import {
  peerAddress,
  refusalReporter,
  type EdgeObservers,
  type EdgeRefusal,
  type EdgeRefusalReason,
} from "./edge-refusals.js"
import { rawErrorResponse, writeError } from "./error-reply.js"
import { trackAnswers } from "./graceful-close.js"
import {
  admissionControl,
  defaultOverload,
  type OverloadObservers,
  type OverloadOptions,
} from "./admission.js"

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
  /**
   * Connections open at once from one address (an IPv6 address counts by its /64), trusted
   * proxies aside; more are refused at accept. No bound when undefined.
   */
  readonly maxConnectionsPerAddress?: number | undefined
}

export const defaultConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 10_000,
  maxConnectionsPerAddress: 512,
}

/** Node checks the timeouts above this often; its default (30 s) would let them overrun by as much. */
const timeoutCheckIntervalMs = 1_000

type Report = (refusal: EdgeRefusal) => void

/** Refuses over the raw socket, before or without a request: logged, counted, then answered. */
const refuseRaw = (
  report: Report,
  socket: Duplex,
  reason: EdgeRefusalReason,
  error: ApiError,
): void => {
  const requestId = newRequestId()
  report({ reason, status: error.status, address: peerAddress(socket), requestId })
  if (closeAfterPendingAnswer(socket)) return
  // The request could not be read, so its own X-Request-Id is not known: the reply names a new one.
  endAndCut(socket, rawErrorResponse(error, requestId))
}

/** What Node's parser error codes are refused as; any other is `bad_request`. */
const clientErrors: Readonly<Record<string, readonly [EdgeRefusalReason, ApiError]>> = {
  HPE_HEADER_OVERFLOW: [
    "headers_too_large",
    apiError("headers_too_large", "the request headers are too large"),
  ],
  ERR_HTTP_REQUEST_TIMEOUT: [
    "request_timeout",
    apiError("request_timeout", "the request took too long to arrive"),
  ],
}
const notHttp = ["bad_request", apiError("bad_request", "the request is not valid HTTP")] as const

/** Node's own answer to a request it could not parse is plain text; make it the Error body. */
const answerClientError =
  (report: Report) =>
  (error: Error & { code?: string }, socket: Duplex): void => {
    if (!firstParseError(socket)) return
    // The client has gone (a reset, say): nobody to answer, nothing refused.
    if (!socket.writable) return void socket.destroy()
    const [reason, reply] = clientErrors[error.code ?? ""] ?? notHttp
    refuseRaw(report, socket, reason, reply)
  }

/** Answers a request the app never sees with the Error body, and closes the connection. */
const refuse = (
  report: Report,
  response: ServerResponse,
  reason: EdgeRefusalReason,
  error: ApiError,
): void => {
  const requestId = requestIdFor(response.req.headers["x-request-id"])
  report({ reason, status: error.status, address: peerAddress(response.req.socket), requestId })
  closeAfterAnswer(response)
  writeError(response, error, requestId, { Connection: "close" })
}

/** An `Expect` other than `100-continue`, which Node would refuse itself with an empty 417. */
const answerExpectation =
  (report: Report) =>
  (request: IncomingMessage, response: ServerResponse): void =>
    refuse(
      report,
      response,
      "expectation_failed",
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
const refuseTunnel =
  (report: Report) =>
  (_request: IncomingMessage, socket: Duplex): void => {
    socket.on("error", () => socket.destroy())
    socket.resume()
    refuseRaw(
      report,
      socket,
      "tunnel",
      apiError("bad_request", "CONNECT is not supported: this is not a proxy"),
    )
  }

/** How many `Host` lines the head has: Node keeps the first and drops the others unseen. */
const hostLines = (request: IncomingMessage): number => {
  let count = 0
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    const name = request.rawHeaders[index] ?? ""
    if (name.length === 4 && name.toLowerCase() === "host") count++
  }
  return count
}

/** The versions served (RFC 9112 §2.3); Node's parser also reads `0.9` and `2.0` request lines. */
const servedVersions: ReadonlySet<string> = new Set(["1.0", "1.1"])

/**
 * Why a request's head cannot be acted on (RFC 9112), if it cannot. A proxy in front may have
 * read such a head otherwise (another body, another host, another version's framing), so what
 * follows it on the connection is not read: the answer closes the connection. Node would accept
 * all but the last and refuse that with an empty 400.
 */
const headFault = (
  request: IncomingMessage,
): readonly [EdgeRefusalReason, ApiError] | undefined => {
  if (!servedVersions.has(request.httpVersion)) {
    // A 400 rather than 505: no request a client can send is answered with a server error.
    return [
      "http_version",
      apiError(
        "bad_request",
        `HTTP/${request.httpVersion} is not supported: send HTTP/1.1 or HTTP/1.0`,
      ),
    ]
  }
  // §6.1: only HTTP/1.1 has the chunked coding; such a body may end, for a proxy, where it did
  // not here.
  if (request.httpVersion !== "1.1" && request.headers["transfer-encoding"] !== undefined) {
    return [
      "framing",
      apiError(
        "bad_request",
        `Transfer-Encoding is not allowed in an HTTP/${request.httpVersion} request: send Content-Length`,
      ),
    ]
  }
  const hosts = hostLines(request)
  // §3.2: never more than one; in HTTP/1.1, exactly one.
  if (hosts > 1) return ["host_header", apiError("bad_request", "send one Host header")]
  if (hosts === 0 && request.httpVersion === "1.1") {
    return ["host_header", apiError("bad_request", "the Host header is required")]
  }
  return undefined
}

const refuseFaultyHeads =
  (report: Report, handler: RequestListener): RequestListener =>
  (request, response) => {
    const fault = headFault(request)
    if (fault === undefined) return handler(request, response)
    refuse(report, response, ...fault)
  }

/** How the server is held and told of what it refuses: the limits and the observers. */
export interface ServerOptions extends EdgeObservers, OverloadObservers {
  /** Each limit not given is `defaultConnectionLimits`'. */
  readonly limits?: Partial<ConnectionLimits>
  /**
   * Admission control (see the README's Overload): each option not given is `defaultOverload`'s;
   * `false` admits everything.
   */
  readonly overload?: Partial<OverloadOptions> | false
}

/**
 * A Node HTTP server for the app (a Koa app or any request listener) that answers every request
 * with the Error body, also those Node would answer itself (malformed, oversized, too slow, a
 * missing `Host`, an `Expect` it cannot meet), refuses heads a proxy could read otherwise, and
 * does not let slow clients, one address's many connections or an unwanted body hold it. Each
 * refusal the app never sees is logged and counted through the options' observers. It does not
 * listen: `listen(server, port, host)`, and `closeGracefully(server, steps)` to stop.
 */
export const createServer = (
  app: Pick<Koa, "callback"> | RequestListener,
  options: ServerOptions = {},
): Server => {
  const { limits: given, overload, ...observers } = options
  const limits: ConnectionLimits = { ...defaultConnectionLimits, ...given }
  const handler = typeof app === "function" ? app : app.callback()
  const report = refusalReporter(observers)
  const admit =
    overload === false
      ? (listener: RequestListener) => listener
      : admissionControl({ ...defaultOverload, ...overload }, observers)
  const answers = trackAnswers(
    admit(trackPendingAnswers(boundUnwantedBodies(refuseFaultyHeads(report, handler)))),
  )
  const server = createNodeServer(
    {
      ServerResponse: AppServerResponse,
      requireHostHeader: false,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: timeoutCheckIntervalMs,
    },
    runNothingAfterLastAnswer(answers.listener),
  )
  answers.register(server)
  server.maxConnections = limits.maxConnections
  // Node drops the headers past this count from `headers` and `rawHeaders`, but its parser still
  // frames the request by them: a `Transfer-Encoding`, `Host` or `Authorization` hidden there
  // would pass every check. No count, then: the head's 16 KiB (`maxHeaderSize`) bounds it.
  server.maxHeadersCount = 0
  reportDroppedConnections(server, report)
  if (limits.maxConnectionsPerAddress !== undefined) {
    limitConnectionsPerAddress(server, {
      max: limits.maxConnectionsPerAddress,
      isExempt: observers.isTrustedProxy ?? (() => false),
      onRefusal: report,
    })
  }
  server.on("clientError", answerClientError(report))
  server.on("checkExpectation", answerExpectation(report))
  server.on("connect", refuseTunnel(report))
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
