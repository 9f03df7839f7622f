import type { Server } from "node:http"
import { Worker } from "node:worker_threads"
import { Schema } from "effect"
import type { Readiness } from "../observability/readiness.js"
import { describeCause, silentLogger, type Logger } from "../vocabulary/logger.js"
import {
  newProbeState,
  probeStateWriter,
  ProbeThreadMessage,
  type ProbeThreadData,
} from "./probe-state.js"

export interface ProbePortOptions {
  readonly port: number
  readonly host: string
  /** Whether storage answers now (the app's `storageReadiness`); asked every `readinessEveryMs`. */
  readonly readiness: (log: Logger) => Promise<Readiness>
  /** Aborted when the process begins to shut down: `/readyz` answers 503 `shutting_down` at once. */
  readonly stopping?: AbortSignal
  /** Where a failed storage probe, or a failure of the thread, is told; nowhere unless given. */
  readonly logger?: Logger
  /**
   * The servers on the main thread (the API's): each request they take is a heartbeat too. An
   * overloaded loop may stay seconds in one poll of its sockets, its timers waiting, while it
   * takes request after request: busy, not stuck.
   */
  readonly servers?: ReadonlyArray<Server>
}

/**
 * The thread's module, compiled beside this one. Node starts a thread from a file, and tsx's
 * loader does not reach into threads: run from source, this needs the package built.
 */
const threadModule = new URL("./probe-thread.js", import.meta.url)

/** How often the main loop's timer beats: well within `stalledAfterMs`. */
const beatEveryMs = 100
/** How often storage is asked, as the app's `/readyz` asks it at most (its answer is reused 1 s). */
const readinessEveryMs = 1_000

/**
 * `GET /healthz` and `GET /readyz` on a port of their own, answered by a thread of their own:
 * within milliseconds however many requests wait on the API's port, which shares the main thread
 * with everything else (see the README's Overload: past what the process can refuse, a probe
 * there waits its turn behind them). The main thread publishes what the answers need, through
 * memory both share: a heartbeat from its loop every 100 ms and from each request its `servers`
 * take, and its readiness, storage asked every second and `stopping` at once. Resolves once the
 * port listens, storage asked a first time.
 */
export const serveProbes = async (
  options: ProbePortOptions,
): Promise<{ readonly port: number; readonly close: () => Promise<void> }> => {
  const state = newProbeState()
  const writer = probeStateWriter(state)
  const logger = options.logger ?? silentLogger
  const { stopping } = options
  const isStopping = () => stopping?.aborted === true
  let asking = false
  const ask = async () => {
    if (asking || isStopping()) return
    asking = true
    const readiness = await options
      .readiness(logger)
      .catch((error: unknown): Readiness => ({ ready: false, reason: describeCause(error) }))
    asking = false
    if (!isStopping()) writer.setReadiness(readiness.ready ? "ready" : "storage_unavailable")
  }
  await ask()
  stopping?.addEventListener("abort", () => writer.setReadiness("shutting_down"), { once: true })
  if (isStopping()) writer.setReadiness("shutting_down")

  const data: typeof ProbeThreadData.Encoded = { port: options.port, host: options.host, state }
  const worker = new Worker(threadModule, { workerData: data })
  const decode = Schema.decodeUnknownSync(ProbeThreadMessage)
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("error", reject)
    worker.once("message", (message: unknown) => {
      const said = decode(message)
      if ("listening" in said) resolve(said.listening)
      else reject(new Error(said.failed))
    })
  }).catch(async (error: unknown) => {
    await worker.terminate()
    throw error
  })
  worker.unref()
  worker.on("error", (error) =>
    logger.error(
      { cause: describeCause(error) },
      "the probe port's thread failed: it no longer answers",
    ),
  )
  for (const server of options.servers ?? []) server.on("request", writer.beat)
  const timers = [
    setInterval(writer.beat, beatEveryMs),
    setInterval(() => void ask(), readinessEveryMs),
  ]
  for (const timer of timers) timer.unref()
  return {
    port,
    close: async () => {
      for (const timer of timers) clearInterval(timer)
      for (const server of options.servers ?? []) server.off("request", writer.beat)
      await worker.terminate()
    },
  }
}
