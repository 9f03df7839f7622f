import type { Logger } from "@petstore/http"
import type { Tracing } from "./Tracing.js"
import type { TracingChoice } from "./tracing-choice.js"

/**
 * Starts tracing as chosen, or nothing when it is off. The SDK is imported only here, and only
 * when on: with tracing off no module of it is loaded and no exporter is made.
 */
export const startTracing = async (
  choice: TracingChoice,
  logger: Logger,
): Promise<Tracing | undefined> =>
  choice.kind === "off"
    ? undefined
    : (await import("./otel-tracing.js")).otelTracing(choice, logger)
