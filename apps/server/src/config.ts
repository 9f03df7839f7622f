import { parseStorageChoice, type StorageChoice } from "./storage/storage-selection.js"
import { shownValue } from "./shown-value.js"
import {
  defaultOtlpEndpoint,
  readCount,
  readOtlpEndpoint,
  readOtlpHeaders,
  readOtlpProtocol,
  readResourceAttributes,
  readSamplerRatio,
  readServiceName,
  readTracesExporter,
  readTracesSampler,
  tracesEndpoint,
  type Parse,
  type TracingChoice,
} from "./tracing/tracing-choice.js"
import { Config, ConfigError, ConfigProvider, Duration, Effect, Either, Option } from "effect"
import {
  anyPeerIsProxy,
  bearerTokenPattern,
  logLevels,
  noTrustedProxy,
  trustedProxies,
  type CorsOrigins,
  type LogLevel,
  type Rate,
  type TrustedProxies,
} from "@petstore/http"

export interface ServerConfig {
  readonly host: string
  readonly port: number
  readonly basePath: string
  /** Empty when none is configured: the server then generates one for the run. */
  readonly apiKeys: ReadonlyArray<string>
  readonly storage: StorageChoice
  /** The production base URL the OpenAPI document names; when none, the document names its own origin. */
  readonly publicUrl: Option.Option<string>
  /** The staging base URL the OpenAPI document names, when there is one. */
  readonly stagingUrl: Option.Option<string>
  /** How long an idempotency key is remembered. */
  readonly idempotencyTtl: Duration.Duration
  /** Requests per API key; none when off. */
  readonly rateLimit: Option.Option<Rate>
  /** Wrong keys per client address; none when off. */
  readonly authFailureLimit: Option.Option<Rate>
  /** The proxies whose `X-Forwarded-For` entries name the client. */
  readonly trustedProxies: TrustedProxies
  /** The Redis that shares the limits' buckets between processes; none: each process keeps its own. */
  readonly redisUrl: Option.Option<string>
  /** What every key the limits keep in Redis begins with. */
  readonly redisPrefix: string
  /** The origins CORS allows; none when CORS is off. */
  readonly corsOrigins: Option.Option<CorsOrigins>
  /** Connections open at once. */
  readonly maxConnections: number
  /** Connections open at once from one address; none when off. */
  readonly maxConnectionsPerAddress: Option.Option<number>
  /** The least severe log lines written. */
  readonly logLevel: LogLevel
  /** Whether `GET /metrics` is served. */
  readonly metrics: boolean
  /** The port of a listener of its own for `GET /metrics`; none: the API's listener serves it. */
  readonly metricsPort: Option.Option<number>
  /** Whether traces are exported, and where (the standard `OTEL_` variables). */
  readonly tracing: TracingChoice
}

/** What applies when a variable is unset or empty: a value, or what happens instead. */
export type SettingDefault = { readonly value: string } | { readonly none: string }

/** One environment variable: how people are told about it and how it is read. */
export interface Setting<A> {
  readonly variable: string
  readonly default: SettingDefault
  /** One line, Markdown. */
  readonly description: string
  readonly config: Config.Config<A>
}

type Environment = Readonly<Record<string, string | undefined>>

const pathSegments = /^(\/[A-Za-z0-9\-._~]+)+$/

interface SettingSpec<A> {
  readonly variable: string
  readonly description: string
  readonly parse: Parse<A>
}

const parsed = <A>(variable: string, parse: Parse<A>, fallback?: string): Config.Config<A> =>
  Config.string(variable).pipe(
    (text) => (fallback === undefined ? text : Config.withDefault(text, fallback)),
    Config.mapOrFail((text) =>
      Either.mapLeft(parse(text, variable), (message) =>
        ConfigError.InvalidData([variable], message),
      ),
    ),
  )

/** A setting whose default is a value, read as if the variable held it. */
const setting = <A>(spec: SettingSpec<A> & { readonly fallback: string }): Setting<A> => ({
  variable: spec.variable,
  default: { value: spec.fallback },
  description: spec.description,
  config: parsed(spec.variable, spec.parse, spec.fallback),
})

/** A setting that may be left unset; `whenUnset` says what happens then. */
const optionalSetting = <A>(
  spec: SettingSpec<A> & { readonly whenUnset: string },
): Setting<Option.Option<A>> => ({
  variable: spec.variable,
  default: { none: spec.whenUnset },
  description: spec.description,
  config: Config.option(parsed(spec.variable, spec.parse)),
})

/**
 * A standard OpenTelemetry variable. The OpenTelemetry SDK reads it from the environment itself;
 * the server checks it (only when tracing is on: see `tracingChoice`) so that a mistake stops it
 * at start instead of being ignored, as the SDK would.
 */
interface OtelSetting<A> extends Setting<Option.Option<A>> {
  readonly parse: Parse<A>
}

const otelSetting = <A>(
  spec: SettingSpec<A> & ({ readonly fallback: string } | { readonly whenUnset: string }),
): OtelSetting<A> => ({
  variable: spec.variable,
  default: "fallback" in spec ? { value: spec.fallback } : { none: spec.whenUnset },
  description: spec.description,
  parse: spec.parse,
  config: Config.option(parsed(spec.variable, spec.parse)),
})

const readPort = (text: string, variable: string): Either.Either<number, string> => {
  const port = Number(text)
  return /^[0-9]+$/.test(text) && port <= 65535
    ? Either.right(port)
    : Either.left(`${variable} must be an integer from 0 to 65535; got ${JSON.stringify(text)}`)
}

const readBasePath = (text: string): Either.Either<string, string> => {
  if (text === "/") return Either.right("")
  const trimmed = text.replace(/\/+$/, "")
  return pathSegments.test(trimmed)
    ? Either.right(trimmed)
    : Either.left(`PETSTORE_BASE_PATH must be a path such as /v1; got ${JSON.stringify(text)}`)
}

const readApiKeys = (text: string): Either.Either<ReadonlyArray<string>, string> => {
  const keys = text
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "")
  const unusable = keys.findIndex((key) => !bearerTokenPattern.test(key))
  return unusable === -1
    ? Either.right(keys)
    : Either.left(
        `PETSTORE_API_KEYS: key ${unusable + 1} has characters a bearer token cannot carry (use letters, digits and - . _ ~ + /)`,
      )
}

/**
 * An absolute http(s) URL without user, password, query or fragment (it is published in the
 * OpenAPI document), returned without a trailing slash.
 */
const readServerUrl = (text: string, variable: string): Either.Either<string, string> => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined &&
    /^https?:$/.test(url.protocol) &&
    url.username === "" &&
    url.password === "" &&
    url.search === "" &&
    url.hash === ""
    ? Either.right(text.replace(/\/+$/, ""))
    : Either.left(
        `${variable} must be an http or https URL without user, password, query or fragment, such as https://api.example.com/v1; ${shownValue(text)}`,
      )
}

const durationUnits: Readonly<Record<string, (amount: number) => Duration.Duration>> = {
  s: Duration.seconds,
  m: Duration.minutes,
  h: Duration.hours,
  d: Duration.days,
}

const readDuration = (text: string, variable: string): Either.Either<Duration.Duration, string> => {
  const match = /^([0-9]+) *(s|seconds?|m|min|minutes?|h|hours?|d|days?)$/.exec(text.trim())
  const amount = Number(match?.[1])
  const unit = durationUnits[match?.[2]?.charAt(0) ?? ""]
  return unit !== undefined && amount > 0
    ? Either.right(unit(amount))
    : Either.left(
        `${variable} must be a positive duration such as 24h, 90min or 3600s; got ${JSON.stringify(text)}`,
      )
}

const rateWindows: Readonly<Record<string, number>> = { s: 1, min: 60, h: 3600 }

/** `<n>/<s|min|h>`, a token bucket of n refilled evenly over the window, or `off`. */
const readRate = (text: string, variable: string): Either.Either<Option.Option<Rate>, string> => {
  const trimmed = text.trim()
  if (trimmed === "off") return Either.right(Option.none())
  const match = /^([0-9]{1,10}) *\/ *(s|min|h)$/.exec(trimmed)
  const capacity = Number(match?.[1])
  const windowSeconds = rateWindows[match?.[2] ?? ""]
  return windowSeconds !== undefined && capacity >= 1
    ? Either.right(Option.some({ capacity, windowSeconds }))
    : Either.left(
        `${variable} must be <count>/<s|min|h> (such as 1000/s or 20/min) or off; got ${JSON.stringify(text)}`,
      )
}

/** A switch spelled `yes` or `no` (any case): `true`/`false`, `on`/`off`. */
const readToggle =
  (yes: string, no: string) =>
  (text: string, variable: string): Either.Either<boolean, string> => {
    const value = text.trim().toLowerCase()
    return value === yes || value === no
      ? Either.right(value === yes)
      : Either.left(`${variable} must be ${yes} or ${no}; got ${JSON.stringify(text)}`)
  }

/**
 * `false`, `true` (the socket's peer, whoever it is), or the proxies by address, CIDR range or
 * `proxy-addr`'s names.
 */
const readTrustedProxies = (
  text: string,
  variable: string,
): Either.Either<TrustedProxies, string> => {
  const trimmed = text.trim().toLowerCase()
  if (trimmed === "false") return Either.right(noTrustedProxy)
  if (trimmed === "true") return Either.right(anyPeerIsProxy)
  const entries = trimmed
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  return Either.try({
    try: () => trustedProxies(entries),
    catch: (error) =>
      `${variable} must be false, true, or the proxies' addresses and CIDR ranges, comma-separated (10.0.0.7, 10.0.0.0/8, loopback): ${error instanceof Error ? error.message : String(error)}`,
  })
}

const readRedisUrl = (text: string, variable: string): Either.Either<string, string> => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined && /^rediss?:$/.test(url.protocol) && url.hostname !== ""
    ? Either.right(text)
    : Either.left(
        `${variable} must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379; ${shownValue(text)}`,
      )
}

const maxRedisPrefixLength = 64

/**
 * Printable ASCII without spaces: a prefix an operator can type as it is into `redis-cli` or a
 * `SCAN` pattern.
 */
const readRedisPrefix = (text: string, variable: string): Either.Either<string, string> => {
  const rule = `${variable} must be 1 to ${maxRedisPrefixLength} printable ASCII characters without spaces, such as petstore:limit:`
  if (text.length > maxRedisPrefixLength) {
    return Either.left(`${rule}; got ${text.length} characters`)
  }
  return /^[\x21-\x7e]+$/.test(text)
    ? Either.right(text)
    : Either.left(`${rule}; got ${JSON.stringify(text)}`)
}

/** An origin as browsers send it: scheme, host and port (when not the default), nothing else. */
const readOrigin = (text: string): Either.Either<string, string> => {
  // WHATWG URLs take `*` in a host, so `https://*.example.com` parses as an origin that no
  // browser ever sends: the operator meant a pattern, and would get CORS for nobody.
  if (text.includes("*")) {
    return Either.left(
      `PETSTORE_CORS_ORIGINS: ${JSON.stringify(text)} is a pattern; wildcards and patterns are not supported: list each origin (https://app.example.com,https://admin.example.com), or give * alone for any`,
    )
  }
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined &&
    /^https?:$/.test(url.protocol) &&
    text.replace(/\/$/, "").toLowerCase() === url.origin.toLowerCase()
    ? Either.right(url.origin)
    : Either.left(
        `PETSTORE_CORS_ORIGINS: ${JSON.stringify(text)} is not an origin such as https://app.example.com (scheme, host and port only)`,
      )
}

const readCorsOrigins = (text: string): Either.Either<CorsOrigins, string> => {
  const entries = text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")
  if (entries.length === 1 && entries[0] === "*") return Either.right("*")
  if (entries.includes("*")) {
    return Either.left(
      "PETSTORE_CORS_ORIGINS: * allows every origin and cannot be listed with others",
    )
  }
  return Either.all(entries.map(readOrigin))
}

/** A positive integer, or `off`. */
const readConnectionsPerAddress = (
  text: string,
  variable: string,
): Either.Either<Option.Option<number>, string> => {
  const trimmed = text.trim()
  if (trimmed === "off") return Either.right(Option.none())
  const count = Number(trimmed)
  return /^[0-9]+$/.test(trimmed) && count >= 1 && Number.isSafeInteger(count)
    ? Either.right(Option.some(count))
    : Either.left(`${variable} must be a positive integer or off; got ${JSON.stringify(text)}`)
}

const readMaxConnections = (text: string): Either.Either<number, string> => {
  const count = Number(text)
  return /^[0-9]+$/.test(text) && count >= 1 && Number.isSafeInteger(count)
    ? Either.right(count)
    : Either.left(
        `PETSTORE_MAX_CONNECTIONS must be a positive integer; got ${JSON.stringify(text)}`,
      )
}

const readLogLevel = (text: string, variable: string): Either.Either<LogLevel, string> => {
  const level = logLevels.find((name) => name === text.trim().toLowerCase())
  return level === undefined
    ? Either.left(`${variable} must be one of ${logLevels.join(", ")}; got ${JSON.stringify(text)}`)
    : Either.right(level)
}

/** Every setting of the server, in the order the README lists them. */
export const settings = {
  port: setting({
    variable: "PORT",
    fallback: "8080",
    description: "TCP port (0 picks a free one; the start-up log says which).",
    parse: readPort,
  }),
  host: setting({
    variable: "HOST",
    fallback: "127.0.0.1",
    description: "Interface to listen on (`0.0.0.0` for all).",
    parse: Either.right,
  }),
  apiKeys: optionalSetting({
    variable: "PETSTORE_API_KEYS",
    whenUnset: "stored keys only; a first start with none makes one (see API keys)",
    description:
      "Comma-separated API keys accepted as `Authorization: Bearer <key>`, beside the keys stored with `npm run keys`. Letters, digits and `-._~+/` only.",
    parse: readApiKeys,
  }),
  basePath: setting({
    variable: "PETSTORE_BASE_PATH",
    fallback: "/v1",
    description: "Where the versioned API is mounted (`/` for the root).",
    parse: readBasePath,
  }),
  storage: setting({
    variable: "PETSTORE_STORAGE",
    fallback: "file:./data/petstore.db",
    description:
      "Where pets are kept: `file:<path>` (an SQLite file), a `postgres://` URL or `memory` (see Storage).",
    parse: parseStorageChoice,
  }),
  publicUrl: optionalSetting({
    variable: "PETSTORE_PUBLIC_URL",
    whenUnset: "the document names the server it was fetched from",
    description:
      "The production base URL the OpenAPI document names in `servers`, ending in the base path (`https://api.example.com/v1`).",
    parse: readServerUrl,
  }),
  stagingUrl: optionalSetting({
    variable: "PETSTORE_STAGING_URL",
    whenUnset: "no staging server is named",
    description:
      "A staging base URL the OpenAPI document names after production (or after this server, when `PETSTORE_PUBLIC_URL` is unset), ending in the base path.",
    parse: readServerUrl,
  }),
  idempotencyTtl: setting({
    variable: "PETSTORE_IDEMPOTENCY_TTL",
    fallback: "24h",
    description:
      "How long an `Idempotency-Key` is remembered (`s`, `min`, `h` or `d`); expired keys are purged in the background.",
    parse: readDuration,
  }),
  rateLimit: setting({
    variable: "PETSTORE_RATE_LIMIT",
    fallback: "1000/s",
    description:
      "Requests per API key: `<n>/<s|min|h>` (a bucket of n refilled evenly over the window; over it, 429 with `Retry-After`) or `off`. Per process, or shared through `PETSTORE_REDIS_URL`.",
    parse: readRate,
  }),
  authFailureLimit: setting({
    variable: "PETSTORE_AUTH_FAILURE_LIMIT",
    fallback: "20/min",
    description:
      "Wrong keys (well-formed tokens that are no key; a missing or malformed `Authorization` is always 401) per client address before they get 429 instead of 401, without a store look-up; a valid key is never refused for it (same syntax as `PETSTORE_RATE_LIMIT`, or `off`). Per process, or shared through `PETSTORE_REDIS_URL`.",
    parse: readRate,
  }),
  trustProxy: setting({
    variable: "PETSTORE_TRUST_PROXY",
    fallback: "false",
    description:
      "The proxies whose `X-Forwarded-For` entries name the client: comma-separated addresses and CIDR ranges (`10.0.0.7,10.0.0.0/8`; `loopback`, `linklocal`, `uniquelocal`), `false` (none: the socket's peer is the client) or `true` (whatever peer connects; only where clients cannot reach the server but through the proxy).",
    parse: readTrustedProxies,
  }),
  redisUrl: optionalSetting({
    variable: "PETSTORE_REDIS_URL",
    whenUnset: "each process keeps its own limits",
    description:
      "A `redis://` URL: the per-key limit and the wrong-key budgets are then shared by every process that names the same Redis (see Abuse limits).",
    parse: readRedisUrl,
  }),
  redisPrefix: setting({
    variable: "PETSTORE_REDIS_PREFIX",
    fallback: "petstore:limit:",
    description: `What every key the limits keep in \`PETSTORE_REDIS_URL\` begins with: deployments sharing one Redis keep their buckets apart by giving each its own (up to ${maxRedisPrefixLength} printable ASCII characters, no spaces).`,
    parse: readRedisPrefix,
  }),
  corsOrigins: optionalSetting({
    variable: "PETSTORE_CORS_ORIGINS",
    whenUnset: "no CORS: browsers on other origins cannot read answers",
    description:
      "Comma-separated origins (`https://app.example.com`) whose browser scripts may call the API, or `*` for any.",
    parse: readCorsOrigins,
  }),
  maxConnections: setting({
    variable: "PETSTORE_MAX_CONNECTIONS",
    fallback: "10000",
    description: "Connections open at once; more are refused when accepted.",
    parse: readMaxConnections,
  }),
  maxConnectionsPerAddress: setting({
    variable: "PETSTORE_MAX_CONNECTIONS_PER_ADDRESS",
    fallback: "512",
    description:
      "Connections open at once from one client address (an IPv6 address counts by its /64; the proxies `PETSTORE_TRUST_PROXY` names are exempt, none with `true`); more are refused when accepted. A positive integer or `off`.",
    parse: readConnectionsPerAddress,
  }),
  logLevel: setting({
    variable: "PETSTORE_LOG_LEVEL",
    fallback: "info",
    description:
      "The least severe log lines written (JSON, one per line): `trace`, `debug`, `info` (one line per request), `warn`, `error`, `fatal` or `silent`. The start-up and shutdown lines are written at any level but `silent`.",
    parse: readLogLevel,
  }),
  metrics: setting({
    variable: "PETSTORE_METRICS",
    fallback: "on",
    description:
      "`on`: `GET /metrics` serves Prometheus metrics, without a key; `off`: it is not served (then an unknown path: 401 without a key, 404 with one).",
    parse: readToggle("on", "off"),
  }),
  metricsPort: optionalSetting({
    variable: "PETSTORE_METRICS_PORT",
    whenUnset: "`GET /metrics` is served on `PORT`, beside the API",
    description:
      "A port of its own for `GET /metrics`, on `HOST`; the API's port then no longer serves it, and this one serves nothing else (0 picks a free one; the start-up log says which). Refused with `PETSTORE_METRICS=off`.",
    parse: readPort,
  }),
  tracesExporter: otelSetting({
    variable: "OTEL_TRACES_EXPORTER",
    whenUnset: "tracing is off unless an OTLP endpoint below is set",
    description:
      "`otlp`: export traces by OTLP over HTTP (see Tracing); `none`: no tracing, whatever else is set. Other exporters (`zipkin`, `console`) are refused.",
    parse: readTracesExporter,
  }),
  otlpEndpoint: otelSetting({
    variable: "OTEL_EXPORTER_OTLP_ENDPOINT",
    whenUnset: `\`${defaultOtlpEndpoint}\` with \`OTEL_TRACES_EXPORTER=otlp\``,
    description:
      "The OTLP/HTTP receiver (a Collector, Jaeger…): spans go to `<url>/v1/traces`. Setting it turns tracing on.",
    parse: readOtlpEndpoint,
  }),
  otlpTracesEndpoint: otelSetting({
    variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    whenUnset: "`OTEL_EXPORTER_OTLP_ENDPOINT` and `/v1/traces`",
    description:
      "The full URL spans are sent to, in place of the one above. Setting it turns tracing on.",
    parse: readOtlpEndpoint,
  }),
  otlpProtocol: otelSetting({
    variable: "OTEL_EXPORTER_OTLP_PROTOCOL",
    fallback: "http/protobuf",
    description:
      "`http/protobuf` or `http/json`; `grpc` is refused (use the receiver's HTTP port).",
    parse: readOtlpProtocol,
  }),
  otlpTracesProtocol: otelSetting({
    variable: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    whenUnset: "`OTEL_EXPORTER_OTLP_PROTOCOL`",
    description: "The same, for traces alone.",
    parse: readOtlpProtocol,
  }),
  otlpHeaders: otelSetting({
    variable: "OTEL_EXPORTER_OTLP_HEADERS",
    whenUnset: "no header",
    description:
      "Headers sent with each export, `name=value` pairs separated by commas, percent-encoded (`authorization=Bearer%20…`). Never logged.",
    parse: readOtlpHeaders,
  }),
  otlpTimeout: otelSetting({
    variable: "OTEL_EXPORTER_OTLP_TIMEOUT",
    fallback: "10000",
    description:
      "Milliseconds one export may take, retries included; a collector that does not answer within it loses that batch.",
    parse: readCount(1),
  }),
  serviceName: otelSetting({
    variable: "OTEL_SERVICE_NAME",
    fallback: "petstore",
    description: "The traces' `service.name`.",
    parse: readServiceName,
  }),
  resourceAttributes: otelSetting({
    variable: "OTEL_RESOURCE_ATTRIBUTES",
    whenUnset: "`service.name` and `service.version` only",
    description:
      "More attributes of the service, `key=value` pairs separated by commas (`deployment.environment.name=production`).",
    parse: readResourceAttributes,
  }),
  tracesSampler: otelSetting({
    variable: "OTEL_TRACES_SAMPLER",
    fallback: "parentbased_always_on",
    description:
      "Which traces are recorded: `always_on`, `always_off`, `traceidratio` (a share, `OTEL_TRACES_SAMPLER_ARG`), or one of them prefixed with `parentbased_`, which follows the caller's decision (`traceparent`) when there is one.",
    parse: readTracesSampler,
  }),
  tracesSamplerArg: otelSetting({
    variable: "OTEL_TRACES_SAMPLER_ARG",
    whenUnset: "1 for the ratio samplers",
    description:
      "The share of new traces the `traceidratio` samplers record, 0 to 1 (`0.1`: one in ten).",
    parse: readSamplerRatio,
  }),
  bspScheduleDelay: otelSetting({
    variable: "OTEL_BSP_SCHEDULE_DELAY",
    fallback: "5000",
    description: "Milliseconds between two exports of the spans waiting.",
    parse: readCount(0),
  }),
  bspExportTimeout: otelSetting({
    variable: "OTEL_BSP_EXPORT_TIMEOUT",
    fallback: "30000",
    description: "Milliseconds the batch processor waits for one export before it gives up on it.",
    parse: readCount(0),
  }),
  bspMaxQueueSize: otelSetting({
    variable: "OTEL_BSP_MAX_QUEUE_SIZE",
    fallback: "2048",
    description:
      "Spans waiting for export; past it, new spans are dropped (never a request slowed or memory grown).",
    parse: readCount(1),
  }),
  bspMaxExportBatchSize: otelSetting({
    variable: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    fallback: "512",
    description: "Spans sent in one export, at most `OTEL_BSP_MAX_QUEUE_SIZE`.",
    parse: readCount(1),
  }),
}

/** A metrics port with metrics off is a contradiction: refused rather than ignored. */
const metricsSettings = Config.all({
  metrics: settings.metrics.config,
  metricsPort: settings.metricsPort.config,
}).pipe(
  Config.mapOrFail((chosen) =>
    chosen.metrics || Option.isNone(chosen.metricsPort)
      ? Either.right(chosen)
      : Either.left(
          ConfigError.InvalidData(
            [settings.metricsPort.variable],
            `${settings.metricsPort.variable} is set but ${settings.metrics.variable} is off: unset one of them`,
          ),
        ),
  ),
)

/** The server URLs must end in the base path: they are where the versioned API is. */
const serverUrls = Config.all({
  basePath: settings.basePath.config,
  publicUrl: settings.publicUrl.config,
  stagingUrl: settings.stagingUrl.config,
}).pipe(
  Config.mapOrFail((urls) => {
    const misplaced = [
      { variable: settings.publicUrl.variable, url: urls.publicUrl },
      { variable: settings.stagingUrl.variable, url: urls.stagingUrl },
    ].flatMap(({ variable, url }) =>
      Option.toArray(url)
        .filter((text) => !new URL(text).pathname.replace(/\/+$/, "").endsWith(urls.basePath))
        .map((text) =>
          ConfigError.InvalidData(
            [variable],
            `${variable} must end in the base path ${urls.basePath}; got ${JSON.stringify(text)}`,
          ),
        ),
    )
    const [first, ...rest] = misplaced
    return first === undefined
      ? Either.right(urls)
      : Either.left(rest.reduce<ConfigError.ConfigError>(ConfigError.And, first))
  }),
)

/** A variable's text as it is, for the settings checked only when tracing is on. */
const textOf = (setting: { readonly variable: string }) =>
  Config.option(Config.string(setting.variable))

/** The settings the SDK reads itself: checked when tracing is on, ignored when it is off. */
const sdkSettings: ReadonlyArray<OtelSetting<unknown>> = [
  settings.otlpHeaders,
  settings.otlpTimeout,
  settings.serviceName,
  settings.resourceAttributes,
  settings.tracesSampler,
  settings.tracesSamplerArg,
  settings.bspScheduleDelay,
  settings.bspExportTimeout,
  settings.bspMaxQueueSize,
  settings.bspMaxExportBatchSize,
]

/**
 * Tracing is on with `OTEL_TRACES_EXPORTER=otlp`, or, unset, once an OTLP endpoint is set: unlike
 * the SDK's default, nothing is sent to localhost:4318 unasked. `none` turns it off whatever else
 * is set, and then no other `OTEL_` variable is read or checked.
 */
const tracingChoice: Config.Config<TracingChoice> = Config.all({
  exporter: settings.tracesExporter.config,
  endpoint: textOf(settings.otlpEndpoint),
  tracesEndpoint: textOf(settings.otlpTracesEndpoint),
  protocol: textOf(settings.otlpProtocol),
  tracesProtocol: textOf(settings.otlpTracesProtocol),
  sdk: Config.all(sdkSettings.map(textOf)),
}).pipe(
  Config.mapOrFail((raw) => {
    const on = Option.match(raw.exporter, {
      onNone: () => Option.isSome(raw.endpoint) || Option.isSome(raw.tracesEndpoint),
      onSome: (exporter) => exporter === "otlp",
    })
    if (!on) return Either.right<TracingChoice>({ kind: "off" })
    const problems: Array<ConfigError.ConfigError> = []
    const check = <A>(setting: OtelSetting<A>, text: Option.Option<string>): A | undefined =>
      Option.getOrUndefined(text) === undefined
        ? undefined
        : Either.match(setting.parse(Option.getOrThrow(text), setting.variable), {
            onLeft: (message) => {
              problems.push(ConfigError.InvalidData([setting.variable], message))
              return undefined
            },
            onRight: (value) => value,
          })
    const endpoint = check(settings.otlpEndpoint, raw.endpoint)
    const specificEndpoint = check(settings.otlpTracesEndpoint, raw.tracesEndpoint)
    const protocol =
      check(settings.otlpTracesProtocol, raw.tracesProtocol) ??
      check(settings.otlpProtocol, raw.protocol) ??
      "http/protobuf"
    sdkSettings.forEach((setting, index) => check(setting, raw.sdk[index] ?? Option.none()))
    const [first, ...rest] = problems
    return first === undefined
      ? Either.right<TracingChoice>({
          kind: "otlp",
          protocol,
          endpoint: tracesEndpoint(endpoint, specificEndpoint),
        })
      : Either.left(rest.reduce<ConfigError.ConfigError>(ConfigError.And, first))
  }),
)

const serverConfig: Config.Config<ServerConfig> = Config.all({
  port: settings.port.config,
  host: settings.host.config,
  apiKeys: Config.map(
    settings.apiKeys.config,
    Option.getOrElse((): ReadonlyArray<string> => []),
  ),
  urls: serverUrls,
  storage: settings.storage.config,
  idempotencyTtl: settings.idempotencyTtl.config,
  rateLimit: settings.rateLimit.config,
  authFailureLimit: settings.authFailureLimit.config,
  trustedProxies: settings.trustProxy.config,
  redisUrl: settings.redisUrl.config,
  redisPrefix: settings.redisPrefix.config,
  corsOrigins: settings.corsOrigins.config,
  maxConnections: settings.maxConnections.config,
  maxConnectionsPerAddress: settings.maxConnectionsPerAddress.config,
  logLevel: settings.logLevel.config,
  metrics: metricsSettings,
  tracing: tracingChoice,
}).pipe(Config.map(({ urls, metrics, ...rest }) => ({ ...rest, ...urls, ...metrics })))

const messagesOf = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...messagesOf(error.left), ...messagesOf(error.right)]
    case "InvalidData":
      return [error.message]
    default:
      return [`${error.path.join(".")}: ${error.message}`]
  }
}

/** An empty variable counts as unset, as shells make it easy to set one to nothing. */
const providerOf = (env: Environment): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(
    new Map(
      Object.entries(env).flatMap(([name, value]): Array<[string, string]> =>
        value === undefined || value === "" ? [] : [[name, value]],
      ),
    ),
  )

/** The server's settings from environment variables, or every problem found with them. */
export const readConfig = (env: Environment): Either.Either<ServerConfig, ReadonlyArray<string>> =>
  providerOf(env).load(serverConfig).pipe(Effect.either, Effect.runSync, Either.mapLeft(messagesOf))

/** One setting read as the server reads it (for tools that share the server's environment). */
export const readSetting = <A>(
  setting: Setting<A>,
  env: Environment,
): Either.Either<A, ReadonlyArray<string>> =>
  providerOf(env)
    .load(setting.config)
    .pipe(Effect.either, Effect.runSync, Either.mapLeft(messagesOf))
