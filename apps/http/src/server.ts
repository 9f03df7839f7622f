import { createServer, type RequestListener, type Server } from "node:http"
import type { Duplex } from "node:stream"

/** Node's own answer to a request it could not parse is plain text; make it the Error body. */
const answerClientError = (error: Error & { code?: string }, socket: Duplex) => {
  if (!socket.writable) return socket.destroy()
  const [status, code, message] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "headers_too_large", "the request headers are too large"]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "request_timeout", "the request took too long to arrive"]
        : [400, "bad_request", "the request is not valid HTTP"]
  const body = JSON.stringify({ code, message, status })
  socket.end(
    `HTTP/1.1 ${status} ${code}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

/** An HTTP server for `app.callback()` that answers even malformed requests with the Error body. */
export const createAppServer = (handler: RequestListener): Server => {
  const server = createServer(handler)
  server.on("clientError", answerClientError)
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
