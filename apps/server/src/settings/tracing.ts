import { Config, Either, Option, Schema } from "effect"
import { shownValue } from "../shown-value.js"
import {
  defaultOtlpEndpoint,
  otlpProtocols,
  tracesEndpoint,
  type OtlpProtocol,
  type TracingChoice,
} from "../tracing/tracing-choice.js"
import {
  documented,
  everyRefusal,
  fromEnv,
  fromSchema,
  optionalSetting,
  readText,
  type Described,
  type Documented,
  type Reading,
} from "./setting.js"
import { oneOf, UrlText } from "./values.js"

// The standard `OTEL_` variables. The server reads those that decide whether tracing is on and
// where spans go, and refuses what it cannot do (another exporter, gRPC, a URL that is not
// http(s)); everything else the OpenTelemetry SDK reads, and checks, itself.

/** An OTLP variable the server reads only when tracing is on (see `tracingConfig`). */
export interface OtlpSetting<A> extends Documented {
  readonly reading: Reading<A>
}

const otlpSetting = <A>(spec: Described & { readonly reading: Reading<A> }): OtlpSetting<A> => ({
  ...documented(spec),
  reading: spec.reading,
})

/** A standard variable the OpenTelemetry SDK reads, and checks, itself: the server does not. */
const sdkSetting = documented

const endpoint: Reading<string> = fromSchema(
  Schema.compose(
    Schema.Trim,
    UrlText((url) => /^https?:$/.test(url.protocol) && url.hostname !== ""),
  ),
  `an http or https URL such as ${defaultOtlpEndpoint}`,
  shownValue,
)

const protocol: Reading<OtlpProtocol> = oneOf(
  otlpProtocols,
  "http/protobuf or http/json (OTLP over gRPC is not supported: use a receiver's HTTP port, 4318)",
)

const defaultProtocol: OtlpProtocol = "http/protobuf"

/** The `OTEL_` variables, ours and the SDK's, as the README documents them. */
export const tracingSettings = {
  tracesExporter: optionalSetting({
    variable: "OTEL_TRACES_EXPORTER",
    whenUnset: "tracing is off unless an OTLP endpoint below is set",
    description:
      "`otlp`: export traces by OTLP over HTTP (see Tracing); `none`: no tracing, whatever else is set. Other exporters (`zipkin`, `console`) are refused.",
    read: fromEnv(
      oneOf(["otlp", "none"], "otlp or none (traces are exported by OTLP over HTTP only)"),
    ),
  }),
  otlpEndpoint: otlpSetting({
    variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
    whenUnset: `\`${defaultOtlpEndpoint}\` with \`OTEL_TRACES_EXPORTER=otlp\``,
    description:
      "The OTLP/HTTP receiver (a Collector, Jaeger…): spans go to `<url>/v1/traces`. Setting it turns tracing on.",
    reading: endpoint,
  }),
  otlpTracesEndpoint: otlpSetting({
    variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    whenUnset: "`OTEL_EXPORTER_OTLP_ENDPOINT` and `/v1/traces`",
    description:
      "The full URL spans are sent to, in place of the one above. Setting it turns tracing on.",
    reading: endpoint,
  }),
  otlpProtocol: otlpSetting({
    variable: "OTEL_EXPORTER_OTLP_PROTOCOL",
    fallback: defaultProtocol,
    description:
      "`http/protobuf` or `http/json`; `grpc` is refused (use the receiver's HTTP port).",
    reading: protocol,
  }),
  otlpTracesProtocol: otlpSetting({
    variable: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    whenUnset: "`OTEL_EXPORTER_OTLP_PROTOCOL`",
    description: "The same, for traces alone.",
    reading: protocol,
  }),
  otlpHeaders: sdkSetting({
    variable: "OTEL_EXPORTER_OTLP_HEADERS",
    whenUnset: "no header",
    description:
      "Headers sent with each export, `name=value` pairs separated by commas, percent-encoded (`authorization=Bearer%20…`). Never logged.",
  }),
  otlpTimeout: sdkSetting({
    variable: "OTEL_EXPORTER_OTLP_TIMEOUT",
    fallback: "10000",
    description:
      "Milliseconds one export may take, retries included; a collector that does not answer within it loses that batch.",
  }),
  serviceName: sdkSetting({
    variable: "OTEL_SERVICE_NAME",
    fallback: "petstore",
    description: "The traces' `service.name`.",
  }),
  resourceAttributes: sdkSetting({
    variable: "OTEL_RESOURCE_ATTRIBUTES",
    whenUnset: "`service.name` and `service.version` only",
    description:
      "More attributes of the service, `key=value` pairs separated by commas (`deployment.environment.name=production`).",
  }),
  tracesSampler: sdkSetting({
    variable: "OTEL_TRACES_SAMPLER",
    fallback: "parentbased_always_on",
    description:
      "Which traces are recorded: `always_on`, `always_off`, `traceidratio` (a share, `OTEL_TRACES_SAMPLER_ARG`), or one of them prefixed with `parentbased_`, which follows the caller's decision (`traceparent`) when there is one.",
  }),
  tracesSamplerArg: sdkSetting({
    variable: "OTEL_TRACES_SAMPLER_ARG",
    whenUnset: "1 for the ratio samplers",
    description:
      "The share of new traces the `traceidratio` samplers record, 0 to 1 (`0.1`: one in ten).",
  }),
  bspScheduleDelay: sdkSetting({
    variable: "OTEL_BSP_SCHEDULE_DELAY",
    fallback: "5000",
    description: "Milliseconds between two exports of the spans waiting.",
  }),
  bspExportTimeout: sdkSetting({
    variable: "OTEL_BSP_EXPORT_TIMEOUT",
    fallback: "30000",
    description: "Milliseconds the batch processor waits for one export before it gives up on it.",
  }),
  bspMaxQueueSize: sdkSetting({
    variable: "OTEL_BSP_MAX_QUEUE_SIZE",
    fallback: "2048",
    description:
      "Spans waiting for export; past it, new spans are dropped (never a request slowed or memory grown).",
  }),
  bspMaxExportBatchSize: sdkSetting({
    variable: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    fallback: "512",
    description: "Spans sent in one export, at most `OTEL_BSP_MAX_QUEUE_SIZE`.",
  }),
}

const { tracesExporter, otlpEndpoint, otlpTracesEndpoint, otlpProtocol, otlpTracesProtocol } =
  tracingSettings

const textOf = (setting: Documented) => Config.option(Config.string(setting.variable))

/** A variable's text, when set, read as its setting says. */
const checked = <A>(setting: OtlpSetting<A>, text: Option.Option<string>) =>
  Option.match(text, {
    onNone: () => Either.right(Option.none<A>()),
    onSome: (set) => Either.map(readText(setting.variable, setting.reading, set), Option.some),
  })

/**
 * Tracing is on with `OTEL_TRACES_EXPORTER=otlp`, or, unset, once an OTLP endpoint is set: unlike
 * the SDK's default, nothing is sent to localhost:4318 unasked. `none` turns it off whatever else
 * is set, and then no other `OTEL_` variable is read. (`Config` has no `flatMap`: the variables
 * read only when tracing is on are read from their text here.)
 */
export const tracingConfig: Config.Config<TracingChoice> = Config.all({
  exporter: tracesExporter.config,
  endpoint: textOf(otlpEndpoint),
  tracesEndpoint: textOf(otlpTracesEndpoint),
  protocol: textOf(otlpProtocol),
  tracesProtocol: textOf(otlpTracesProtocol),
}).pipe(
  Config.mapOrFail((raw) => {
    const on = Option.match(raw.exporter, {
      onNone: () => Option.isSome(raw.endpoint) || Option.isSome(raw.tracesEndpoint),
      onSome: (exporter) => exporter === "otlp",
    })
    if (!on) return Either.right<TracingChoice>({ kind: "off" })
    const checks = {
      endpoint: checked(otlpEndpoint, raw.endpoint),
      tracesEndpoint: checked(otlpTracesEndpoint, raw.tracesEndpoint),
      // The traces' own protocol, when set, is the one: the general one is not read then.
      protocol: Option.isSome(raw.tracesProtocol)
        ? checked(otlpTracesProtocol, raw.tracesProtocol)
        : checked(otlpProtocol, raw.protocol),
    }
    return Either.all(checks).pipe(
      Either.map((chosen): TracingChoice => ({
        kind: "otlp",
        protocol: Option.getOrElse(chosen.protocol, () => defaultProtocol),
        endpoint: tracesEndpoint(
          Option.getOrUndefined(chosen.endpoint),
          Option.getOrUndefined(chosen.tracesEndpoint),
        ),
      })),
      Either.mapLeft(everyRefusal(checks)),
    )
  }),
)
