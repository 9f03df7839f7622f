import { pino } from "pino"
import {
  createLogger,
  visibleJson,
  type Logger,
  type LogLevel,
  type StdStream,
} from "@petstore/http"
import { lineDestination, standardStream, type LineDestination } from "./log-destination.js"

/**
 * What stdout and stderr may each hold in the process while their reader falls behind: some
 * 4,000 access lines, about a second of full load, beyond what the pipe itself holds (64 KiB+).
 */
const maxWaitingBytes = 1024 * 1024

/**
 * Lines to `destination` with no raw control character (`visibleJson`): clients can put C1
 * characters in a line (Node reads header bytes 0x80 to 0xFF as U+0080 to U+00FF, and an
 * `X-Forwarded-For` entry that is no address is logged as `address: "claim:…"`), and so may a
 * driver's error message. About 0.2 µs for an access line.
 */
const escapingRawInJson = (destination: LineDestination): Pick<LineDestination, "write"> => ({
  write: (line) => destination.write(visibleJson(line)),
})

export interface ProcessLogger {
  readonly logger: Logger
  /** Waits, for `ms` at most, until the lines logged so far have left the process. */
  readonly flush: (ms: number) => Promise<void>
}

/**
 * The server's logger: info and below to stdout, warnings and errors to stderr. Neither ever
 * holds the process: a request never waits on the reader, a reader that falls behind costs
 * a bounded buffer (lines past it are dropped, and `onDrop` is told of each), and a reader that
 * is gone (EPIPE) drops every later line. See `lineDestination` and `standardStream`. No line
 * carries a raw control character (see `escapingRawInJson`).
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
        { level: "trace", stream: escapingRawInJson(stdout) },
        { level: "warn", stream: escapingRawInJson(stderr) },
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
