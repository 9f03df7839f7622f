/** What overload.ts asks of open-loop-worker.ts, and what the worker answers. */
import { Schema } from "effect"
import { LoadRequest } from "./load-plan.js"

export const OpenLoopPlan = Schema.Struct({
  origin: Schema.String,
  /** Sent in turn, one per scheduled time. */
  requests: Schema.NonEmptyArray(LoadRequest),
  /** Requests a second, evenly spaced. */
  rate: Schema.Number,
  /** Scheduled at the rate before the measured ones; their outcomes are not counted. */
  warmupSeconds: Schema.Number,
  seconds: Schema.Number,
  /** Each request is given up (its connection closed) this long after its scheduled time. */
  deadlineMs: Schema.Number,
  /** The most connections open at once; a request finding none free waits for one, its deadline running. */
  maxSockets: Schema.Int,
  /** Connections opened (with a `GET <openPath>` each, `/healthz`) and kept before the first request. */
  preopen: Schema.Int,
  openPath: Schema.String,
})
export type OpenLoopPlan = typeof OpenLoopPlan.Type

/** Latencies of one kind of answer, in ms from the scheduled time. */
export const Latencies = Schema.Struct({
  count: Schema.Number,
  p50: Schema.Number,
  p99: Schema.Number,
  max: Schema.Number,
})
export type Latencies = typeof Latencies.Type

/** Nearest-rank percentiles of an unsorted list, which it sorts. */
export const latencies = (samples: Array<number>): Latencies => {
  samples.sort((a, b) => a - b)
  const at = (p: number) => samples[Math.max(0, Math.ceil((p / 100) * samples.length) - 1)] ?? 0
  return { count: samples.length, p50: at(50), p99: at(99), max: samples.at(-1) ?? 0 }
}

export const OpenLoopCounts = Schema.Struct({
  /** Requests scheduled in the measured window. */
  scheduled: Schema.Number,
  /** 2xx within the deadline. */
  served: Latencies,
  /** 503 within the deadline. */
  refused: Latencies,
  /** Refusals in each second of the measured window, by scheduled time. */
  refusedEachSecond: Schema.Array(Schema.Number),
  /** Another status within the deadline. */
  otherStatus: Schema.Number,
  /** No whole answer within the deadline: given up. */
  timedOut: Schema.Number,
  /** The connection failed (refused, reset) within the deadline. */
  failed: Schema.Number,
  /** The first refusal's status line, headers and body, to check its form. */
  refusalSample: Schema.optional(Schema.String),
  /** How late the worker sent requests after their scheduled times, in ms. */
  sendLagP99: Schema.Number,
  sendLagMax: Schema.Number,
  /** The worker's own CPU over the measured window, as a share of one core. */
  workerCpuShare: Schema.Number,
  /** Connections opened over the whole run. */
  connectionsOpened: Schema.Number,
})
export type OpenLoopCounts = typeof OpenLoopCounts.Type

/** A line overload.ts sends the worker: a plan to run. */
export const OpenLoopCommand = Schema.Struct({ plan: OpenLoopPlan })

export const OpenLoopEvent = Schema.Union(
  /** The first measured request is being sent: the runner reads the server's CPU time. */
  Schema.Struct({ event: Schema.Literal("measuring") }),
  /** The last measured request has been scheduled. */
  Schema.Struct({ event: Schema.Literal("measured") }),
  Schema.Struct({ event: Schema.Literal("done"), counts: OpenLoopCounts }),
)
export type OpenLoopEvent = typeof OpenLoopEvent.Type
