// The hardened Node server the app is served with: what `npm start` runs, for any host process.
export {
  createServer,
  defaultConnectionLimits,
  listen,
  type ConnectionLimits,
  type ServerOptions,
} from "./server.js"
export { closeGracefully, quietWithinMs, type CloseSteps } from "./graceful-close.js"
export type { EdgeObservers, EdgeRefusal, EdgeRefusalReason } from "./edge-refusals.js"
export { unwantedBodyBudget } from "./connection-closing.js"
export { metricsConnectionLimits, metricsListener, serveMetrics } from "./metrics-listener.js"
export { serveProbes, type ProbePortOptions } from "./probe-port.js"
export { defaultOverload, type OverloadObservers, type OverloadOptions } from "./admission.js"
export type { OverloadReadings } from "../observability/metrics.js"
