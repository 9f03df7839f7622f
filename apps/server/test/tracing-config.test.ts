import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either } from "effect"
import { readConfig } from "../src/settings/read-config.js"
import { settings } from "../src/settings/settings.js"
import { describeTracingChoice } from "../src/tracing/tracing-choice.js"

// The standard OTEL_ variables as the server reads them: whether tracing is on, where it exports,
// and the mistakes that stop it at start. What the SDK then reads of them itself is checked on a
// running server, against a real receiver (tracing.test.ts).

const tracingOf = (env: Record<string, string>) => Either.getOrThrow(readConfig(env)).tracing

const problemsOf = (env: Record<string, string>) =>
  Either.match(readConfig(env), { onLeft: (problems) => problems.join("\n"), onRight: () => "" })

const collector = "http://collector.internal:4318"

describe("readConfig: tracing", () => {
  it("is off unless OTEL_TRACES_EXPORTER=otlp or an OTLP endpoint is set", () => {
    assert.deepEqual(tracingOf({}), { kind: "off" })
    // The SDK's own settings alone turn nothing on.
    assert.deepEqual(
      tracingOf({
        OTEL_SERVICE_NAME: "petstore",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_HEADERS: "a=b",
        OTEL_TRACES_SAMPLER: "always_on",
        OTEL_BSP_MAX_QUEUE_SIZE: "100",
      }),
      { kind: "off" },
    )
  })

  it("with OTEL_TRACES_EXPORTER=otlp alone, exports to the SDK's default receiver", () => {
    assert.deepEqual(tracingOf({ OTEL_TRACES_EXPORTER: "otlp" }), {
      kind: "otlp",
      protocol: "http/protobuf",
      endpoint: "http://localhost:4318/v1/traces",
    })
    assert.equal(tracingOf({ OTEL_TRACES_EXPORTER: " OTLP " }).kind, "otlp")
  })

  it("with an endpoint, exports to its /v1/traces; the traces endpoint is taken as it is, and wins", () => {
    for (const endpoint of [collector, `${collector}/`]) {
      assert.deepEqual(tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }), {
        kind: "otlp",
        protocol: "http/protobuf",
        endpoint: `${collector}/v1/traces`,
      })
    }
    assert.deepEqual(
      tracingOf({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/ingest",
      }),
      { kind: "otlp", protocol: "http/protobuf", endpoint: "https://traces.example.com/ingest" },
    )
    assert.equal(
      tracingOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://traces.example.com/ingest" }).kind,
      "otlp",
    )
  })

  it("reads the protocol, the traces' own first", () => {
    const protocolOf = (env: Record<string, string>) => {
      const tracing = tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: collector, ...env })
      return tracing.kind === "otlp" ? tracing.protocol : undefined
    }
    assert.equal(protocolOf({}), "http/protobuf")
    assert.equal(protocolOf({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }), "http/json")
    assert.equal(
      protocolOf({
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf",
      }),
      "http/protobuf",
    )
    // The general protocol is not read once the traces' own is set: gRPC there is not used.
    assert.equal(
      protocolOf({
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      }),
      "http/json",
    )
  })

  it("is off with OTEL_TRACES_EXPORTER=none, whatever else is set, and then checks nothing else", () => {
    assert.deepEqual(
      tracingOf({
        OTEL_TRACES_EXPORTER: "none",
        OTEL_EXPORTER_OTLP_ENDPOINT: "not a url",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_TRACES_SAMPLER: "sometimes",
      }),
      { kind: "off" },
    )
    assert.deepEqual(tracingOf({ OTEL_TRACES_SAMPLER: "sometimes" }), { kind: "off" })
  })

  it("refuses an exporter other than otlp or none, even with tracing off", () => {
    for (const exporter of ["zipkin", "console", "jaeger", "otlp,console"]) {
      assert.match(
        problemsOf({ OTEL_TRACES_EXPORTER: exporter }),
        /^OTEL_TRACES_EXPORTER must be otlp or none/,
        exporter,
      )
    }
  })

  it("refuses grpc, saying it is not supported, and any other protocol", () => {
    for (const variable of ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) {
      const grpc = problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: collector, [variable]: "grpc" })
      assert.match(grpc, new RegExp(`^${variable} must be http/protobuf or http/json`))
      assert.match(grpc, /gRPC is not supported/)
      assert.match(
        problemsOf({ OTEL_EXPORTER_OTLP_ENDPOINT: collector, [variable]: "http/xml" }),
        new RegExp(`^${variable}`),
      )
    }
  })

  it("refuses an endpoint that is not an http(s) URL, never echoing one that may hold a password", () => {
    for (const variable of ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]) {
      for (const endpoint of ["collector:4318", "ftp://collector", "localhost"]) {
        assert.match(
          problemsOf({ [variable]: endpoint }),
          new RegExp(`^${variable} must be an http or https URL`),
          endpoint,
        )
      }
      const secret = problemsOf({ [variable]: "htp://user:s3cret@collector" })
      assert.match(secret, new RegExp(`^${variable}`))
      assert.doesNotMatch(secret, /s3cret/)
    }
  })

  it("leaves what the SDK reads itself to it: not refused at start, the choice unchanged", () => {
    // The SDK applies its own rules to these (a value it cannot read is ignored, with a warning
    // through its diag logger, for its default): the server neither re-checks nor refuses them.
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: collector }
    const unreadByTheServer = {
      OTEL_EXPORTER_OTLP_HEADERS: "authorization",
      OTEL_EXPORTER_OTLP_TIMEOUT: "soon",
      OTEL_RESOURCE_ATTRIBUTES: "deployment=a=b",
      OTEL_TRACES_SAMPLER: "jaeger_remote",
      OTEL_TRACES_SAMPLER_ARG: "1.5",
      OTEL_BSP_SCHEDULE_DELAY: "-1",
      OTEL_BSP_EXPORT_TIMEOUT: "1e3",
      OTEL_BSP_MAX_QUEUE_SIZE: "0",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "many",
    }
    assert.equal(problemsOf({ ...on, ...unreadByTheServer }), "")
    assert.deepEqual(tracingOf({ ...on, ...unreadByTheServer }), tracingOf(on))
    // And what is documented is accepted as well, of course.
    assert.deepEqual(
      tracingOf({
        ...on,
        OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20abc, x-tenant=pets",
        OTEL_EXPORTER_OTLP_TIMEOUT: "2000",
        OTEL_SERVICE_NAME: "petstore-eu",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=production,team=pets%3Dcore",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
        OTEL_BSP_SCHEDULE_DELAY: "0",
        OTEL_BSP_EXPORT_TIMEOUT: "30000",
        OTEL_BSP_MAX_QUEUE_SIZE: "2048",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "512",
      }),
      tracingOf(on),
    )
  })

  it("never shows a header's value: headers are the SDK's, and the start-up line names none", () => {
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector,
      OTEL_EXPORTER_OTLP_HEADERS: "x-ok=1,authorization=%E0%A4%Asecret-token",
    }
    assert.equal(problemsOf(env), "")
    assert.doesNotMatch(describeTracingChoice(tracingOf(env)), /secret-token|authorization/)
  })

  it("lists the OTEL_ variables in the settings the README documents", () => {
    const variables = Object.values(settings).map((setting) => setting.variable)
    for (const variable of [
      "OTEL_TRACES_EXPORTER",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
      "OTEL_EXPORTER_OTLP_PROTOCOL",
      "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
      "OTEL_EXPORTER_OTLP_HEADERS",
      "OTEL_SERVICE_NAME",
      "OTEL_RESOURCE_ATTRIBUTES",
      "OTEL_TRACES_SAMPLER",
      "OTEL_TRACES_SAMPLER_ARG",
      "OTEL_BSP_SCHEDULE_DELAY",
      "OTEL_BSP_EXPORT_TIMEOUT",
      "OTEL_BSP_MAX_QUEUE_SIZE",
      "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    ]) {
      assert.ok(variables.includes(variable), variable)
    }
  })
})

describe("describeTracingChoice", () => {
  it("names the protocol and the endpoint, without credentials or query", () => {
    assert.equal(describeTracingChoice({ kind: "off" }), "off")
    assert.equal(
      describeTracingChoice({
        kind: "otlp",
        protocol: "http/json",
        endpoint: "https://user:s3cret@traces.example.com/v1/traces?token=abc",
      }),
      "OTLP http/json to https://traces.example.com/v1/traces",
    )
  })
})
