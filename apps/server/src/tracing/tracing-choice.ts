/** The OTLP encodings this server can export in. */
export const otlpProtocols = ["http/protobuf", "http/json"] as const
export type OtlpProtocol = (typeof otlpProtocols)[number]

/**
 * Whether traces are exported, as decided from the standard `OTEL_` variables (see
 * `settings/tracing.ts`). Everything else those variables say (headers, sampler, batching,
 * resource) the OpenTelemetry SDK reads from the environment itself.
 */
export type TracingChoice =
  | { readonly kind: "off" }
  | {
      readonly kind: "otlp"
      readonly protocol: OtlpProtocol
      /** Where spans are sent, as the exporter derives it from the endpoint variables. */
      readonly endpoint: string
    }

/** The OTLP/HTTP receiver the SDK sends to when no endpoint is set (`OTEL_TRACES_EXPORTER=otlp`). */
export const defaultOtlpEndpoint = "http://localhost:4318"

const tracesPath = "v1/traces"

/**
 * Where the exporter sends spans: the traces endpoint as given, or the general endpoint with
 * `/v1/traces` appended, as the OTLP exporter specification (and the SDK) derives it.
 */
export const tracesEndpoint = (
  general: string | undefined,
  specific: string | undefined,
): string => {
  if (specific !== undefined) return specific
  const base = general ?? defaultOtlpEndpoint
  return `${base}${base.endsWith("/") ? "" : "/"}${tracesPath}`
}

/** The endpoint as the start-up line shows it: no credentials, no query (either may be a secret). */
export const shownEndpoint = (endpoint: string): string => {
  const url = new URL(endpoint)
  return `${url.origin}${url.pathname}`
}

/** How the start-up line names the tracing chosen: never a header or a credential. */
export const describeTracingChoice = (choice: TracingChoice): string =>
  choice.kind === "off" ? "off" : `OTLP ${choice.protocol} to ${shownEndpoint(choice.endpoint)}`
