import { pino, type DestinationStream, type LevelWithSilent, type Logger } from "pino"

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
