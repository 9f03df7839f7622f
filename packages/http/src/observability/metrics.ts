import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client"
import type { StdStream } from "../vocabulary/logger.js"
import type { RefusalScope } from "../limits/rate.js"

/**
 * What the service counts for Prometheus, in a registry of its own (never prom-client's global
 * one), so that several apps in one process never share or collide.
 */
export interface Metrics {
  readonly registry: Registry
  /**
   * One answered request. `operation` is an operation id or a route template, never a raw path:
   * clients must not be able to create label values.
   */
  readonly observeRequest: (operation: string, status: number, seconds: number) => void
  /** A request (or the readiness probe) that storage could not answer. */
  readonly recordStorageError: (operation: string) => void
  /** A request refused with 429. */
  readonly recordRateLimitRefusal: (scope: RefusalScope) => void
  /** A request or connection the server refused before the app saw it; no status when none was sent. */
  readonly recordEdgeRefusal: (status: number | undefined, reason: string) => void
  /** Redis, sharing the limits, stopped answering. */
  readonly recordLimitStoreOutage: () => void
  /** A limit decided in this process because Redis could not answer. */
  readonly recordLimitDecidedLocally: () => void
  /** How many creates one group commit took together. */
  readonly observeBatchSize: (size: number) => void
  /** A log line dropped: its reader was too slow, or gone. */
  readonly recordLogLineDropped: (stream: StdStream) => void
  /**
   * Exposes what the server's admission control counts, read at each scrape (its counters are
   * plain numbers: a refusal costs no metric update). Once per registry.
   */
  readonly watchOverload: (readings: OverloadReadings) => void
}

/** What admission control reports (`@petstore/http/node`'s server gives it), read at each scrape. */
export interface OverloadReadings {
  /** Requests let through since the start (health, readiness and metrics included). */
  readonly admitted: () => number
  /** Requests refused with 503 `overloaded` since the start. */
  readonly refused: () => number
  /** The longest wait estimated for a request since the last call, in seconds; 0 without requests. */
  readonly takeLongestWaitSeconds: () => number
  /**
   * Whether a standing queue is being cut: from when waits have stayed above the target for the
   * interval until none has waited past it for a second (or the interval, if longer).
   */
  readonly standing: () => boolean
  /** The target in force, in seconds: the one given, plus a CPU quota's longest freeze. */
  readonly targetSeconds: () => number
}

const durationBuckets = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
]
// Powers of two up to the group commit's default largest batch (256).
const batchSizeBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256]

export interface MetricsOptions {
  /** Node's process metrics (CPU, memory, event loop, GC); on unless false. */
  readonly processMetrics?: boolean
}

export const createMetrics = (options: MetricsOptions = {}): Metrics => {
  const registry = new Registry()
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry })
  const requestDuration = new Histogram({
    name: "petstore_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by operation id (or route template) and status.",
    labelNames: ["operation", "status"] as const,
    buckets: durationBuckets,
    registers: [registry],
  })
  const storageErrors = new Counter({
    name: "petstore_storage_errors_total",
    help: "Requests answered 503 because storage could not answer, by operation id (or readyz).",
    labelNames: ["operation"] as const,
    registers: [registry],
  })
  const rateLimitRefusals = new Counter({
    name: "petstore_rate_limit_refusals_total",
    help: "Requests refused with 429: scope key (an API key over its rate), address (a client address past its budget of wrong keys) or lookups (this process looking up as many unknown keys as it may).",
    labelNames: ["scope"] as const,
    registers: [registry],
  })
  const edgeRefusals = new Counter({
    name: "petstore_http_refusals_total",
    help: "Requests and connections the server refused before the app saw them, by status (none: closed at accept) and reason.",
    labelNames: ["status", "reason"] as const,
    registers: [registry],
  })
  const limitStoreOutages = new Counter({
    name: "petstore_rate_limit_store_outages_total",
    help: "Times Redis, sharing the rate limits (PETSTORE_REDIS_URL), stopped answering.",
    registers: [registry],
  })
  const limitsDecidedLocally = new Counter({
    name: "petstore_rate_limit_local_decisions_total",
    help: "Rate-limit decisions this process made alone because Redis did not answer in time.",
    registers: [registry],
  })
  const batchSize = new Histogram({
    name: "petstore_group_commit_batch_size",
    help: "Creates committed together in one transaction (SQL storage).",
    buckets: batchSizeBuckets,
    registers: [registry],
  })
  const logLinesDropped = new Counter({
    name: "petstore_log_lines_dropped_total",
    help: "Log lines dropped because the reader of stdout or stderr fell behind or went away.",
    labelNames: ["stream"] as const,
    registers: [registry],
  })
  // Both series exist from the start, so that a rate over them needs no first drop.
  logLinesDropped.inc({ stream: "stdout" }, 0)
  logLinesDropped.inc({ stream: "stderr" }, 0)
  // Looking a labelled series up hashes its labels; the few series there are are looked up once.
  const durationSeries = new Map<string, Histogram.Internal<"operation" | "status">>()
  return {
    registry,
    observeRequest: (operation, status, seconds) => {
      const key = `${status} ${operation}`
      let series = durationSeries.get(key)
      if (series === undefined) {
        series = requestDuration.labels({ operation, status })
        durationSeries.set(key, series)
      }
      series.observe(seconds)
    },
    recordStorageError: (operation) => storageErrors.inc({ operation }),
    recordRateLimitRefusal: (scope) => rateLimitRefusals.inc({ scope }),
    recordEdgeRefusal: (status, reason) =>
      edgeRefusals.inc({ status: status === undefined ? "none" : String(status), reason }),
    recordLimitStoreOutage: () => limitStoreOutages.inc(),
    recordLimitDecidedLocally: () => limitsDecidedLocally.inc(),
    observeBatchSize: (size) => batchSize.observe(size),
    recordLogLineDropped: (stream) => logLinesDropped.inc({ stream }),
    watchOverload: (readings) => watchOverload(registry, readings),
  }
}

/** A counter whose value is read from `total` at each scrape. */
const counterOf = (registry: Registry, name: string, help: string, total: () => number) => {
  let shown = 0
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = total()
      this.inc(now - shown)
      shown = now
    },
  })
}

const watchOverload = (registry: Registry, readings: OverloadReadings): void => {
  counterOf(
    registry,
    "petstore_overload_admitted_total",
    "Requests admission control let through (health, readiness and metrics included).",
    readings.admitted,
  )
  counterOf(
    registry,
    "petstore_overload_refused_total",
    "Requests refused with 503 overloaded: they had waited too long, and were refused before the app saw them.",
    readings.refused,
  )
  new Gauge({
    name: "petstore_overload_wait_seconds",
    help: "The longest a request had waited when it was read, as estimated from the event loop's turns, since the previous scrape.",
    registers: [registry],
    collect() {
      this.set(readings.takeLongestWaitSeconds())
    },
  })
  new Gauge({
    name: "petstore_overload_target_seconds",
    help: "The wait past which requests are refused while the queue stands: the target set, plus the longest freeze of the process's CPU quota.",
    registers: [registry],
    collect() {
      this.set(readings.targetSeconds())
    },
  })
  new Gauge({
    name: "petstore_overload_standing_queue",
    help: "1 from when waits have stayed above the target for the interval until none has waited past it for a second (or the interval, if longer), requests that waited past the target being refused meanwhile; else 0.",
    registers: [registry],
    collect() {
      this.set(readings.standing() ? 1 : 0)
    },
  })
}

/** What records, without the registry: what code that counts is given. */
export type MetricsRecorder = Omit<Metrics, "registry">

/** For an app whose metrics are off: records nothing. */
export const discardMetrics: MetricsRecorder = {
  observeRequest: () => {},
  recordStorageError: () => {},
  recordRateLimitRefusal: () => {},
  recordEdgeRefusal: () => {},
  recordLimitStoreOutage: () => {},
  recordLimitDecidedLocally: () => {},
  observeBatchSize: () => {},
  recordLogLineDropped: () => {},
  watchOverload: () => {},
}
