/**
 * The probe port's thread (started by `serveProbes`): a server of its own, on an event loop of
 * its own, answering `/healthz` and `/readyz` from the state the main thread publishes. It tells
 * the main thread `{ listening: port }` once it listens, or `{ failed: reason }`.
 */
import { parentPort, workerData } from "node:worker_threads"
import { Schema } from "effect"
import { describeCause } from "../vocabulary/logger.js"
import { probeListener } from "./probe-listener.js"
import { ProbeThreadData, probeStateReader, type ProbeThreadMessage } from "./probe-state.js"
import { createServer, listen, type ConnectionLimits } from "./server.js"
import { metricsConnectionLimits } from "./metrics-listener.js"

/** Probers are few and ask often, as scrapers do: the metrics port's limits. */
const probeConnectionLimits: ConnectionLimits = metricsConnectionLimits

if (parentPort !== null) {
  const port = parentPort
  const data = Schema.decodeUnknownSync(ProbeThreadData)(workerData)
  const server = createServer(probeListener(probeStateReader(data.state)), {
    limits: probeConnectionLimits,
    overload: false,
  })
  const say = (message: typeof ProbeThreadMessage.Type) => port.postMessage(message)
  listen(server, data.port, data.host).then(
    (listening) => say({ listening }),
    (error: unknown) => say({ failed: describeCause(error) }),
  )
}
