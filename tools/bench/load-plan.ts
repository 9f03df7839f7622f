/** What http-bench.ts asks of load-worker.ts, and what the worker answers. */
import { Schema } from "effect"

export const LoadRequest = Schema.Struct({
  method: Schema.Literal("GET", "POST"),
  path: Schema.String,
  headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  body: Schema.optional(Schema.String),
})
export type LoadRequest = typeof LoadRequest.Type

export const LoadPlan = Schema.Struct({
  origin: Schema.String,
  /** Sent in turn by every connection (one request: always that one). */
  requests: Schema.NonEmptyArray(LoadRequest),
  connections: Schema.Int,
  warmupSeconds: Schema.Number,
  /** The measured run lasts this long, unless `amount` is given. */
  seconds: Schema.Number,
  /** When given, the measured run sends exactly this many requests instead. */
  amount: Schema.optional(Schema.Int),
})
export type LoadPlan = typeof LoadPlan.Type

export const LoadCounts = Schema.Struct({
  responses: Schema.Number,
  ok: Schema.Number,
  non2xx: Schema.Number,
  errors: Schema.Number,
  timeouts: Schema.Number,
  /** Seconds, as autocannon measured the run. */
  duration: Schema.Number,
  latencyP50: Schema.Number,
  latencyP99: Schema.Number,
  /** Responses by status code. */
  statusCodes: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number })),
})
export type LoadCounts = typeof LoadCounts.Type

/** A line the runner sends the load worker: a plan to warm up for, or `go` to measure it. */
export const WorkerCommand = Schema.Union(Schema.Struct({ plan: LoadPlan }), Schema.Literal("go"))
export type WorkerCommand = typeof WorkerCommand.Type
