import { Worker } from "node:worker_threads"
import { Effect } from "effect"

/**
 * What a long `storage` command shows while it works: on a terminal one line, rewritten at most
 * ten times a second (rows copied of the total, and the rate); piped, nothing, so that its
 * output is the summary line alone.
 */
export interface Progress {
  /** Starts counting toward `total` rows. */
  readonly start: (total: number) => Effect.Effect<void>
  /** `rows` more are copied. */
  readonly advance: (rows: number) => Effect.Effect<void>
  /** Clears the line. */
  readonly finish: Effect.Effect<void>
  /**
   * Runs `effect`, which may block this thread while it writes `file` (SQLite's backup API), and
   * meanwhile shows how far the file has grown toward `totalBytes`, from a thread of its own.
   */
  readonly whileFileGrows: <A, E, R>(
    file: string,
    totalBytes: number,
    effect: Effect.Effect<A, E, R>,
  ) => Effect.Effect<A, E, R>
}

export const silentProgress: Progress = {
  start: () => Effect.void,
  advance: () => Effect.void,
  finish: Effect.void,
  whileFileGrows: (_file, _totalBytes, effect) => effect,
}

const clearLine = "\r\x1b[K"
const number = (value: number) => Math.round(value).toLocaleString("en-US")
const percent = (done: number, total: number) =>
  total === 0 ? 100 : Math.min(100, Math.floor((done * 100) / total))

// A plain script, so that it runs the same from the sources (tsx) and from dist/. It writes
// with writeSync on the process's stderr, which needs no turn of the blocked main thread.
const fileWatcher = `
const { workerData } = require("node:worker_threads")
const { statSync, writeSync } = require("node:fs")
const { file, total, label } = workerData
const started = Date.now()
const megabytes = (bytes) => (bytes / 1e6).toFixed(1)
setInterval(() => {
  let size = 0
  try { size = statSync(file).size } catch {}
  const seconds = Math.max((Date.now() - started) / 1000, 0.001)
  const percent = Math.min(100, Math.floor((size * 100) / Math.max(total, 1)))
  writeSync(2, "\\r\\x1b[K" + label + ": " + megabytes(size) + " of " +
    megabytes(total) + " MB (" + percent + "%), " + megabytes(size / seconds) + " MB/s")
}, 100)
`

/** Progress on `stream`, a terminal, prefixed with `label` (`backup`, `restore`). */
export const terminalProgress = (label: string, stream: NodeJS.WriteStream): Progress => {
  let total = 0
  let done = 0
  let started = 0
  let shown = 0
  const show = (force: boolean) => {
    const now = Date.now()
    if (!force && now - shown < 100) return
    shown = now
    const seconds = Math.max((now - started) / 1000, 0.001)
    stream.write(
      `${clearLine}${label}: ${number(done)} of ${number(total)} rows (${percent(done, total)}%), ${number(done / seconds)} rows/s`,
    )
  }
  return {
    start: (rows) =>
      Effect.sync(() => {
        total = rows
        done = 0
        started = Date.now()
        show(true)
      }),
    advance: (rows) =>
      Effect.sync(() => {
        done += rows
        show(false)
      }),
    finish: Effect.sync(() => {
      if (started !== 0) stream.write(clearLine)
      started = 0
    }),
    whileFileGrows: (file, totalBytes, effect) =>
      Effect.acquireUseRelease(
        Effect.sync(
          () =>
            new Worker(fileWatcher, {
              eval: true,
              execArgv: [],
              workerData: { file, total: totalBytes, label },
            }),
        ),
        () => effect,
        (worker) =>
          Effect.zipRight(
            Effect.promise(() => worker.terminate()),
            Effect.sync(() => stream.write(clearLine)),
          ),
      ),
  }
}

/** Progress on stderr when it is a terminal; none otherwise. */
export const progressFor = (label: string): Progress =>
  process.stderr.isTTY ? terminalProgress(label, process.stderr) : silentProgress
