import { pino } from "pino"
import { createLogger, type Logger, type LogLevel, type StdStream } from "@petstore/http"
import { lineDestination, standardStream } from "./log-destination.js"

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
