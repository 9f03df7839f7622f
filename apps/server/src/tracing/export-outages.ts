import { describeCause, type Logger } from "@petstore/http"

/** At most one warning about failed exports in this long, however many fail. */
export const outageWarningIntervalMs = 60_000

export interface ExportOutages {
  readonly failed: (cause: unknown) => void
  readonly succeeded: () => void
}

/**
 * What the process says of the collector: one `warn` line when exports start failing (spans are
 * dropped while they do), at most one a minute while they go on, and one `info` line when an
 * export succeeds again. The cause is the exporter's (a refused connection, a timeout, an HTTP
 * status); the headers sent, which may hold a token, are never in it.
 */
export const exportOutages = (
  logger: Logger,
  endpoint: string,
  now: () => number = Date.now,
): ExportOutages => {
  let failing = false
  let warnedAt = Number.NEGATIVE_INFINITY
  return {
    failed: (cause) => {
      failing = true
      if (now() - warnedAt < outageWarningIntervalMs) return
      warnedAt = now()
      logger.warn(
        { endpoint, cause: describeCause(cause) },
        "traces cannot be exported: spans are dropped until the collector answers (at most one such line a minute)",
      )
    },
    succeeded: () => {
      if (!failing) return
      failing = false
      logger.info({ endpoint }, "traces are exported again")
    },
  }
}
