import { pino, type DestinationStream, type LevelWithSilent, type Logger } from "pino"
import { lineDestination, standardStream } from "./log-destination.js"

export type { Logger }

/** What `PETSTORE_LOG_LEVEL` accepts, most to least verbose, then `silent`. */
export const logLevels = [
  "trace",
  "debug",
  "info",
  "warn",
  "error",
  "fatal",
  "silent",
] as const satisfies ReadonlyArray<LevelWithSilent>

export type LogLevel = (typeof logLevels)[number]

/**
 * A second guard: no code logs these, but should a request's headers or a key ever be passed to
 * a log call, the value is replaced. Few and exact paths, as each one costs on every line.
 */
const redactedPaths = [
  "authorization",
  "headers.authorization",
  "req.headers.authorization",
  "apiKey",
  "key",
  "token",
]

/**
 * JSON lines as this service has always written them: `level` as a name, `time` in ISO 8601 and
 * the text under `message`, so consumers of the earlier format keep working.
 */
const options = (level: LogLevel) => ({
  level,
  messageKey: "message",
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label: string) => ({ level: label }) },
  redact: { paths: redactedPaths, censor: "[redacted]" },
})

/** A logger writing to `destination`; for tests and embedding. */
export const createLogger = (level: LogLevel, destination: DestinationStream): Logger =>
  pino(options(level), destination)

/** Which standard stream a line was meant for. */
export type StdStream = "stdout" | "stderr"

/**
 * What stdout and stderr may each hold in the process while their reader falls behind: some
 * 4,000 access lines, about a second of full load, beyond what the pipe itself holds (64 KiB+).
 */
const maxWaitingBytes = 1024 * 1024

export interface ProcessLogger {
  readonly logger: Logger
  /** Waits, for `ms` at most, until the lines logged so far have left the process. */
  readonly flush: (ms: number) => Promise<void>
}

/**
 * The server's logger: info and below to stdout, warnings and errors to stderr. Neither ever
 * holds the process: a request never waits on the reader, a reader that falls behind costs
 * a bounded buffer (lines past it are dropped, and `onDrop` is told of each), and a reader that
 * is gone (EPIPE) drops every later line. See `lineDestination` and `standardStream`.
 */
export const processLogger = (
  level: LogLevel,
  onDrop: (stream: StdStream) => void = () => {},
): ProcessLogger => {
  const stdout = lineDestination(standardStream("stdout"), {
    maxWaitingBytes,
    onDrop: () => onDrop("stdout"),
  })
  const stderr = lineDestination(standardStream("stderr"), {
    maxWaitingBytes,
    onDrop: () => onDrop("stderr"),
  })
  const logger = createLogger(
    level,
    pino.multistream(
      [
        { level: "trace", stream: stdout },
        { level: "warn", stream: stderr },
      ],
      { dedupe: true },
    ),
  )
  return {
    logger,
    flush: async (ms) => {
      await Promise.all([stdout.flush(ms), stderr.flush(ms)])
    },
  }
}

export const silentLogger: Logger = pino({ level: "silent" })

/**
 * The logger for the start-up and shutdown lines: they are written whatever the level (tests,
 * the benchmark and orchestrators wait for them), unless logging is `silent`.
 */
export const lifecycleLogger = (logger: Logger): Logger =>
  logger.isLevelEnabled("info") || logger.level === "silent"
    ? logger
    : logger.child({}, { level: "info" })

/** An error's message and those of the errors behind it, outermost first; never a stack. */
export const describeCause = (cause: unknown, seen: Set<unknown> = new Set()): string => {
  if (cause === undefined || cause === null || seen.has(cause)) return ""
  seen.add(cause)
  if (cause instanceof Error) {
    const inner = describeCause(cause.cause, seen)
    return inner === "" ? cause.message : `${cause.message}: ${inner}`
  }
  return String(cause)
}
