import { performance } from "node:perf_hooks"
import { Schema } from "effect"
import type { NotReadyReason } from "../observability/probe-answers.js"

/** What the probe thread answers `/readyz` with. */
export type ReadinessState = "ready" | NotReadyReason
const readinessStates: ReadonlyArray<ReadinessState> = [
  "ready",
  "storage_unavailable",
  "shutting_down",
]

/**
 * What the main thread tells the probe thread, in memory both share: when it last showed life
 * (a timer, a request taken), and whether the process is ready. Times are milliseconds since
 * `epoch`, kept in 32 bits and subtracted with wrap-around, so that any age under 24 days reads
 * right however long the process runs.
 */
export const ProbeState = Schema.Struct({
  buffer: Schema.instanceOf(SharedArrayBuffer),
  /** Wall-clock milliseconds when the state was made. */
  epoch: Schema.Number,
})
export type ProbeState = typeof ProbeState.Type

/** What the probe thread is started with. */
export const ProbeThreadData = Schema.Struct({
  port: Schema.Int,
  host: Schema.String,
  state: ProbeState,
})

/** What the probe thread tells the main thread once: the port it listens on, or why it cannot. */
export const ProbeThreadMessage = Schema.Union(
  Schema.Struct({ listening: Schema.Int }),
  Schema.Struct({ failed: Schema.String }),
)

const beatCell = 0
const readinessCell = 1

/** A new state: alive just now, and storage not known to answer yet. */
export const newProbeState = (): ProbeState => {
  const state = { buffer: new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT), epoch: now() }
  const writer = probeStateWriter(state)
  writer.beat()
  writer.setReadiness("storage_unavailable")
  return state
}

/** Wall-clock milliseconds, alike in every thread (each has its own `performance.now()` origin). */
const now = (): number => performance.timeOrigin + performance.now()

const sinceEpoch = (state: ProbeState): number => Math.floor(now() - state.epoch) | 0

export interface ProbeStateWriter {
  /** The main thread is alive: called from it, often (a timer, each request taken). */
  readonly beat: () => void
  readonly setReadiness: (readiness: ReadinessState) => void
}

export const probeStateWriter = (state: ProbeState): ProbeStateWriter => {
  const cells = new Int32Array(state.buffer)
  return {
    beat: () => void Atomics.store(cells, beatCell, sinceEpoch(state)),
    setReadiness: (readiness) =>
      void Atomics.store(cells, readinessCell, readinessStates.indexOf(readiness)),
  }
}

export interface ProbeStateReader {
  /** How long ago the main thread last showed life, in ms. */
  readonly heartbeatAgeMs: () => number
  readonly readiness: () => ReadinessState
}

export const probeStateReader = (state: ProbeState): ProbeStateReader => {
  const cells = new Int32Array(state.buffer)
  return {
    heartbeatAgeMs: () => (sinceEpoch(state) - Atomics.load(cells, beatCell)) | 0,
    readiness: () => readinessStates[Atomics.load(cells, readinessCell)] ?? "storage_unavailable",
  }
}
