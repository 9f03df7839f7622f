import { Cause, Logger as EffectLogger, type Layer, type LogLevel } from "effect"
import { describeCause, type Logger } from "@petstore/http"

const methodOf = (
  level: LogLevel.LogLevel,
): "fatal" | "error" | "warn" | "info" | "debug" | "trace" => {
  switch (level._tag) {
    case "Fatal":
      return "fatal"
    case "Error":
      return "error"
    case "Warning":
      return "warn"
    case "Info":
      return "info"
    case "Debug":
      return "debug"
    default:
      return "trace"
  }
}

/**
 * Effect's own log calls (the storage's background purge, say) as lines of `logger`, so that the
 * process writes one format. Provide it under the storage layer so its fibers use it too.
 */
export const effectLogsTo = (logger: Logger): Layer.Layer<never> =>
  EffectLogger.replace(
    EffectLogger.defaultLogger,
    EffectLogger.make(({ logLevel, message, cause }) => {
      const parts = Array.isArray(message) ? message : [message]
      const text = parts.filter((part) => typeof part === "string").join(" ")
      const details = parts.filter((part) => typeof part !== "string")
      logger[methodOf(logLevel)](
        {
          ...(details.length === 0 ? {} : { details }),
          ...(Cause.isEmpty(cause) ? {} : { cause: describeCause(Cause.squash(cause)) }),
        },
        text,
      )
    }),
  )
