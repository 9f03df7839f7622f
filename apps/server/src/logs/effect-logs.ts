import {
  Cause,
  Context,
  FiberRef,
  FiberRefs,
  Logger as EffectLogger,
  Option,
  Tracer,
  type Layer,
  type LogLevel,
} from "effect"
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

/** The ids of the span the logging fiber is in, as the request's own lines name them. */
const spanIdsOf = (fiberRefs: FiberRefs.FiberRefs): Readonly<Record<string, string>> =>
  Option.match(
    Context.getOption(
      FiberRefs.getOrDefault(fiberRefs, FiberRef.currentContext),
      Tracer.ParentSpan,
    ),
    {
      onNone: () => ({}),
      onSome: (span) => ({ trace_id: span.traceId, span_id: span.spanId }),
    },
  )

export interface EffectLogsOptions {
  /**
   * Whether a line written inside a span carries its `trace_id` and `span_id`: only when traces
   * are exported. Untraced, Effect's own spans (`sql.execute`) still have ids, which lead nowhere.
   */
  readonly traceIds?: boolean
}

/**
 * Effect's own log calls (the storage's background purge, say) as lines of `logger`, so that the
 * process writes one format. Provide it under the storage layer so its fibers use it too.
 */
export const effectLogsTo = (logger: Logger, options: EffectLogsOptions = {}): Layer.Layer<never> =>
  EffectLogger.replace(
    EffectLogger.defaultLogger,
    EffectLogger.make(({ logLevel, message, cause, context }) => {
      const parts = Array.isArray(message) ? message : [message]
      const text = parts.filter((part) => typeof part === "string").join(" ")
      const details = parts.filter((part) => typeof part !== "string")
      logger[methodOf(logLevel)](
        {
          ...(options.traceIds === true ? spanIdsOf(context) : {}),
          ...(details.length === 0 ? {} : { details }),
          ...(Cause.isEmpty(cause) ? {} : { cause: describeCause(Cause.squash(cause)) }),
        },
        text,
      )
    }),
  )
