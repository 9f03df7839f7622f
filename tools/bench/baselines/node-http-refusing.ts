/**
 * The floor of a refusal in Node: a bare `node:http` server that answers every request but
 * `/healthz` with the service's overload refusal (503 `overloaded`, the same head and body, built
 * once, a request id the only part made per request), reading nothing of it. Held to the same
 * quota under the same load, what it costs an answer is what any refusal made inside Node's HTTP
 * server costs at least (overload.ts sets it beside the service's refusals).
 *
 *   PORT=8084 node --import tsx baselines/node-http-refusing.ts
 */
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import { announce, errorBody, listenAddress } from "./pet-store.js"

const body = JSON.stringify(
  errorBody(
    503,
    "overloaded",
    "the server is overloaded and refused this request before doing any of it; retry after Retry-After seconds",
  ),
)
const head = [
  "Content-Type",
  "application/json; charset=utf-8",
  "Content-Length",
  String(Buffer.byteLength(body)),
  "X-Content-Type-Options",
  "nosniff",
  "Retry-After",
  "1",
]

const server = createServer((request, response) => {
  if (request.url === "/healthz") {
    response.writeHead(200, { "Content-Type": "text/plain", "Content-Length": 2 })
    response.end("ok")
    return
  }
  response.writeHead(503, [...head, "X-Request-Id", randomUUID()])
  response.end(body)
})

// As the service keeps idle connections (PETSTORE_KEEP_ALIVE_TIMEOUT's default), not Node's 5 s.
server.keepAliveTimeout = 65_000

const { port, host } = listenAddress()
server.listen(port, host, () => {
  const address = server.address()
  announce(typeof address === "object" && address !== null ? address.port : port, host)
})
