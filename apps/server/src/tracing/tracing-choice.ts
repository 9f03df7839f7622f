import { Either } from "effect"
import { shownValue } from "../shown-value.js"

/** The OTLP encodings this server can export in. */
export const otlpProtocols = ["http/protobuf", "http/json"] as const
export type OtlpProtocol = (typeof otlpProtocols)[number]

/**
 * Whether traces are exported, as decided from the standard `OTEL_` variables. Everything else
 * those variables say (headers, sampler, batching, resource) the OpenTelemetry SDK reads from
 * the environment itself; it is checked here only so that a mistake stops the server at start.
 */
export type TracingChoice =
  | { readonly kind: "off" }
  | {
      readonly kind: "otlp"
      readonly protocol: OtlpProtocol
      /** Where spans are sent, as the exporter derives it from the endpoint variables. */
      readonly endpoint: string
    }

/** Turns a variable's text into its value, or a message that names the variable. */
export type Parse<A> = (text: string, variable: string) => Either.Either<A, string>

/** The OTLP/HTTP receiver the SDK sends to when no endpoint is set (`OTEL_TRACES_EXPORTER=otlp`). */
export const defaultOtlpEndpoint = "http://localhost:4318"

const tracesPath = "v1/traces"

/** `otlp` or `none`: the only exporters this server has. */
export const readTracesExporter: Parse<"otlp" | "none"> = (text, variable) => {
  const value = text.trim().toLowerCase()
  return value === "otlp" || value === "none"
    ? Either.right(value)
    : Either.left(
        `${variable} must be otlp or none (traces are exported by OTLP over HTTP only); got ${JSON.stringify(text)}`,
      )
}

/** An http(s) URL; a refusal does not echo what may hold credentials. */
export const readOtlpEndpoint: Parse<string> = (text, variable) => {
  const trimmed = text.trim()
  const url = URL.canParse(trimmed) ? new URL(trimmed) : undefined
  return url !== undefined && /^https?:$/.test(url.protocol) && url.hostname !== ""
    ? Either.right(trimmed)
    : Either.left(
        `${variable} must be an http or https URL such as ${defaultOtlpEndpoint}; ${shownValue(text)}`,
      )
}

export const readOtlpProtocol: Parse<OtlpProtocol> = (text, variable) => {
  const value = text.trim().toLowerCase()
  const protocol = otlpProtocols.find((known) => known === value)
  return protocol !== undefined
    ? Either.right(protocol)
    : Either.left(
        `${variable} must be http/protobuf or http/json${
          value === "grpc"
            ? " (OTLP over gRPC is not supported: use a receiver's HTTP port, 4318)"
            : ""
        }; got ${JSON.stringify(text)}`,
      )
}

/** `name=value` pairs separated by commas, percent-encoded. Values are secrets: never echoed. */
export const readOtlpHeaders: Parse<string> = (text, variable) => {
  const entries = text.split(",").map((entry) => entry.trim())
  const unreadable = entries.findIndex((entry) => {
    if (entry === "") return false
    const separator = entry.indexOf("=")
    const name = entry.slice(0, separator).trim()
    const value = entry.slice(separator + 1).trim()
    return separator <= 0 || name === "" || value === "" || !decodes(name) || !decodes(value)
  })
  return unreadable === -1
    ? Either.right(text)
    : Either.left(
        `${variable} must be name=value pairs separated by commas, percent-encoded; entry ${unreadable + 1} is not (its value is not shown)`,
      )
}

const decodes = (text: string): boolean => {
  try {
    decodeURIComponent(text)
    return true
  } catch {
    return false
  }
}

/** `key=value` pairs separated by commas, `,` and `=` percent-encoded, as the SDK reads them. */
export const readResourceAttributes: Parse<string> = (text, variable) => {
  const entries = text.split(",").filter((entry) => entry.trim() !== "")
  const unreadable = entries.find((entry) => {
    const parts = entry.split("=")
    const [key, value] = parts
    return parts.length !== 2 || key?.trim() === "" || !decodes(key ?? "") || !decodes(value ?? "")
  })
  return unreadable === undefined
    ? Either.right(text)
    : Either.left(
        `${variable} must be key=value pairs separated by commas (with , and = percent-encoded); ${JSON.stringify(unreadable.trim())} is not one`,
      )
}

export const readServiceName: Parse<string> = (text) => Either.right(text.trim())

/** The samplers the OpenTelemetry JS SDK builds from `OTEL_TRACES_SAMPLER`. */
export const tracesSamplers = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const

export const readTracesSampler: Parse<string> = (text, variable) =>
  tracesSamplers.some((sampler) => sampler === text)
    ? Either.right(text)
    : Either.left(
        `${variable} must be one of ${tracesSamplers.join(", ")}; got ${JSON.stringify(text)}`,
      )

export const readSamplerRatio: Parse<number> = (text, variable) => {
  const ratio = Number(text.trim())
  return text.trim() !== "" && ratio >= 0 && ratio <= 1
    ? Either.right(ratio)
    : Either.left(
        `${variable} must be a ratio from 0 to 1 (0.1 keeps one trace in ten); got ${JSON.stringify(text)}`,
      )
}

/** A whole number of milliseconds or spans, at least `least`. */
export const readCount =
  (least: number): Parse<number> =>
  (text, variable) => {
    const count = Number(text.trim())
    return /^[0-9]+$/.test(text.trim()) && Number.isSafeInteger(count) && count >= least
      ? Either.right(count)
      : Either.left(
          `${variable} must be an integer of at least ${least}; got ${JSON.stringify(text)}`,
        )
  }

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
