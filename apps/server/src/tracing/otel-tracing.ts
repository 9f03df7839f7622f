import { readFileSync } from "node:fs"
import * as OtelTracer from "@effect/opentelemetry/Tracer"
import { ExportResultCode, W3CTraceContextPropagator } from "@opentelemetry/core"
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources"
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base"
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions"
import { tracedPetRepositoryLayer } from "@petstore/core"
import type { Logger } from "@petstore/http"
import { otelRequestTracing } from "@petstore/http/otel"
import { Layer } from "effect"
import { exportOutages, type ExportOutages } from "./export-outages.js"
import type { Tracing } from "./Tracing.js"
import type { OtlpProtocol, TracingChoice } from "./tracing-choice.js"

/** The `service.name` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) says otherwise. */
const serviceName = "petstore"

/** This app's version (`package.json` is two folders up from both `src/tracing` and `dist/tracing`). */
const serviceVersion = (): string => {
  const manifest: unknown = JSON.parse(
    readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
  )
  return typeof manifest === "object" &&
    manifest !== null &&
    "version" in manifest &&
    typeof manifest.version === "string"
    ? manifest.version
    : "unknown"
}

/**
 * The OTLP exporter for the protocol. It reads the endpoint, headers, timeout and compression
 * (`OTEL_EXPORTER_OTLP_*`) from the environment itself; only the chosen one is loaded.
 */
const otlpExporter = async (protocol: OtlpProtocol): Promise<SpanExporter> => {
  switch (protocol) {
    case "http/protobuf":
      return new (await import("@opentelemetry/exporter-trace-otlp-proto")).OTLPTraceExporter()
    case "http/json":
      return new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter()
  }
}

/** The exporter, telling `outages` how each export went. */
const reportingOutages = (exporter: SpanExporter, outages: ExportOutages): SpanExporter => ({
  export: (spans, done) =>
    exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) outages.succeeded()
      else outages.failed(result.error ?? new Error("the export failed"))
      done(result)
    }),
  shutdown: () => exporter.shutdown(),
  forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
})

/**
 * The OpenTelemetry SDK, started: a tracer provider whose resource is `service.name` (petstore),
 * `service.version` and what `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` add (the
 * resources' env detector reads them), sampled as `OTEL_TRACES_SAMPLER` says (the provider reads
 * it), and a batch span processor (reading `OTEL_BSP_*`) in front of the OTLP exporter. The
 * processor's queue is bounded: when the collector is slow or down, spans past it are dropped,
 * a request never waits for an export, and the process says so once a minute at most.
 *
 * Loaded only when tracing is on (see `startTracing`): with tracing off no module of the SDK is.
 */
export const otelTracing = async (
  choice: Extract<TracingChoice, { readonly kind: "otlp" }>,
  logger: Logger,
): Promise<Tracing> => {
  const version = serviceVersion()
  const resource = defaultResource()
    .merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: version }),
    )
    .merge(detectResources({ detectors: [envDetector] }))
  const exporter = reportingOutages(
    await otlpExporter(choice.protocol),
    exportOutages(logger, choice.endpoint),
  )
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  })
  const tracer = provider.getTracer(serviceName, version)
  return {
    tracerLayer: OtelTracer.layerWithoutOtelTracer.pipe(
      Layer.provide(Layer.succeed(OtelTracer.OtelTracer, tracer)),
    ),
    repositorySpans: tracedPetRepositoryLayer,
    requestTracing: otelRequestTracing(tracer, { propagator: new W3CTraceContextPropagator() }),
    shutdown: () => provider.shutdown(),
  }
}
