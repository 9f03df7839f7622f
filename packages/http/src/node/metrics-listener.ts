import type { RequestListener, Server } from "node:http"
import { apiError } from "../vocabulary/api-error.js"
import type { MetricsExposition } from "../observability/metrics-exposition.js"
import { requestIdHeader } from "../request/request-id.js"
import type { EdgeObservers } from "./edge-refusals.js"
import { readOnlyListener, replyWithError, requestIdOf } from "./read-only-listener.js"
import { createServer, defaultConnectionLimits, listen, type ConnectionLimits } from "./server.js"

const metricsPath = "/metrics"

/**
 * What the metrics port answers: `GET /metrics` (and HEAD), the same exposition as the API's
 * own route would serve; any other method there is 405 with `Allow`, any other path 404, both
 * with the Error body. No key: keep the port behind a network policy. Serve it with
 * `createServer`, which answers what Node would itself (malformed requests, slow clients).
 */
export const metricsListener = (exposition: MetricsExposition): RequestListener =>
  readOnlyListener([metricsPath], (_path, request, response) => {
    exposition.render().then(
      (text) => {
        response.writeHead(200, {
          "Content-Type": exposition.contentType,
          "Content-Length": Buffer.byteLength(text),
          "Cache-Control": "no-store",
          "X-Content-Type-Options": "nosniff",
          [requestIdHeader]: requestIdOf(request),
        })
        response.end(request.method === "HEAD" ? undefined : text)
      },
      () =>
        replyWithError(
          request,
          response,
          apiError("internal_error", "the metrics could not be rendered"),
        ),
    )
  })

/**
 * Scrapers are few, and send their request as soon as they connect: a flood of connections to
 * the metrics port is refused early, no address may hold more than a few, and a connection that
 * sends no request is dropped within a few seconds, so idle sockets cannot keep a scrape out.
 */
export const metricsConnectionLimits: ConnectionLimits = {
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 5_000,
  keepAliveTimeoutMs: defaultConnectionLimits.keepAliveTimeoutMs,
  // Far more than scrapers need: sockets refused per address hold a place here until they close.
  maxConnections: 256,
  maxConnectionsPerAddress: 8,
}

/**
 * The metrics port: `metricsListener` on its own server, its refusals logged (with
 * `listener: "metrics"`) and counted as the API port's are; resolves once it listens.
 */
export const serveMetrics = async (
  exposition: MetricsExposition,
  port: number,
  host: string,
  observers: EdgeObservers = {},
): Promise<{ readonly server: Server; readonly port: number }> => {
  const server = createServer(metricsListener(exposition), {
    ...observers,
    limits: metricsConnectionLimits,
    ...(observers.logger === undefined
      ? {}
      : { logger: observers.logger.child({ listener: "metrics" }) }),
  })
  return { server, port: await listen(server, port, host) }
}
