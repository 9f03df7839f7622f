import { createLogger, type Logger, type LogLevel } from "@petstore/http"
import { captureLogs as captureLines, type CapturedLogs } from "@petstore/test-support/log-capture"

/** A real logger (the server's format, redaction included) writing into memory. */
export const captureLogs = (level: LogLevel = "info"): CapturedLogs<Logger> =>
  captureLines((sink) => createLogger(level, sink))
