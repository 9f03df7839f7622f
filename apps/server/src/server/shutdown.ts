import type { Server } from "node:http"
import { describeCause, type Logger } from "@petstore/http"
import { closeGracefully, quietWithinMs, type CloseSteps } from "@petstore/http/node"

export interface ShutdownOptions {
  readonly server: Server
  /** The metrics port's server, when there is one: closed with `server`, by the same steps. */
  readonly metricsServer?: Server | undefined
  /** What holds the storage; disposed once the requests in flight are done. */
  readonly runtime: { readonly dispose: () => Promise<void> }
  readonly logger: Logger
  /** Aborted first: the app's `GET /readyz` answers 503 from then on (the app's `stopping`). */
  readonly notReady?: AbortController | undefined
  /**
   * Then how long the servers go on accepting connections and answering as usual, for load
   * balancers to notice; 0 unless given.
   */
  readonly drainMs?: number
  /**
   * Once they no longer accept connections, how long idle kept-alive connections are left to their
   * clients before they are closed (see `CloseSteps`); 0 unless given.
   */
  readonly idleMs?: number
  /**
   * Once they no longer accept connections, how long requests in flight may take before their
   * connections are cut.
   */
  readonly graceMs: number
  /** How long closing the storage may take after that. */
  readonly disposeMs: number
  /**
   * The traces' exporter, when tracing is on: flushed last (spans of closing the storage
   * included), in what is left of `disposeMs` once the storage is closed.
   */
  readonly tracing?: { readonly shutdown: () => Promise<void> } | undefined
}

/** Cutting connections is immediate; this only bounds a server that would still not close. */
const connectionCutMs = 1_000

type Outcome = { readonly finished: true } | { readonly finished: false; readonly reason: string }

const settleWithin = (work: Promise<void>, ms: number): Promise<Outcome> => {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<Outcome>((resolve) => {
    timer = setTimeout(() => resolve({ finished: false, reason: `not done after ${ms} ms` }), ms)
  })
  const settled = work.then(
    (): Outcome => ({ finished: true }),
    (error: unknown): Outcome => ({ finished: false, reason: describeCause(error) }),
  )
  return Promise.race([settled, late]).finally(() => clearTimeout(timer))
}

/**
 * Says not ready, goes on serving for the drain, then stops accepting connections (the API's and
 * the metrics port's), leaves idle kept-alive connections to their clients for a while, lets the
 * requests in flight finish (each answer now closing its connection), then closes the storage,
 * each step within its deadline, and last exports the spans still waiting, within what is left of
 * the storage's. Resolves with the exit code: 0, or 1 once a step fails or overruns, logging
 * which, so that a stuck step never keeps the process alive. Spans that could not be exported in
 * time are a warning, not a failed shutdown.
 */
export const shutdown = async (options: ShutdownOptions): Promise<number> => {
  const drainMs = options.drainMs ?? 0
  const steps: CloseSteps = { drainMs, idleMs: options.idleMs ?? 0, graceMs: options.graceMs }
  options.notReady?.abort()
  let disposeDeadline = Number.POSITIVE_INFINITY
  const sequence = [
    {
      unfinished: "the requests in flight",
      run: async () => {
        await Promise.all(
          [options.server, options.metricsServer].flatMap((server) =>
            server === undefined ? [] : [closeGracefully(server, steps)],
          ),
        )
      },
      ms: drainMs + (drainMs > 0 ? quietWithinMs : 0) + options.graceMs + connectionCutMs,
    },
    {
      unfinished: "closing the storage",
      run: () => {
        disposeDeadline = Date.now() + options.disposeMs
        return options.runtime.dispose()
      },
      ms: options.disposeMs,
    },
  ]
  for (const step of sequence) {
    const outcome = await settleWithin(step.run(), step.ms)
    if (!outcome.finished) {
      options.logger.error(
        { unfinished: step.unfinished, reason: outcome.reason },
        "shutdown incomplete, exiting anyway",
      )
      return 1
    }
  }
  if (options.tracing !== undefined) {
    const ms = Math.max(0, disposeDeadline - Date.now())
    const outcome = await settleWithin(options.tracing.shutdown(), ms)
    // Spans lost to a collector that is down are not the service failing to stop.
    if (!outcome.finished) {
      options.logger.warn({ reason: outcome.reason }, "the last spans were not all exported")
    }
  }
  return 0
}
