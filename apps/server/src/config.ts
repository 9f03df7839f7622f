import { parseStorageChoice, type StorageChoice } from "./storage/storage-selection.js"
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

/** Turns a variable's text into its value, or a message that names the variable. */
type Parse<A> = (text: string, variable: string) => Either.Either<A, string>

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

/** An absolute http(s) URL without query or fragment, returned without a trailing slash. */
const readServerUrl = (text: string, variable: string): Either.Either<string, string> => {
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined && /^https?:$/.test(url.protocol) && url.search === "" && url.hash === ""
    ? Either.right(text.replace(/\/+$/, ""))
    : Either.left(
        `${variable} must be an http or https URL such as https://api.example.com/v1; got ${JSON.stringify(text)}`,
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
        `${variable} must be a redis:// or rediss:// URL such as redis://127.0.0.1:6379; got ${JSON.stringify(text)}`,
      )
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
      "Wrong keys per client address before they get 429 instead of 401, without a store look-up; a valid key is never refused for it (same syntax as `PETSTORE_RATE_LIMIT`, or `off`). Per process, or shared through `PETSTORE_REDIS_URL`.",
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
      "Connections open at once from one client address (an IPv6 address counts by its /64; trusted proxies are exempt); more are refused when accepted. A positive integer or `off`.",
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
  corsOrigins: settings.corsOrigins.config,
  maxConnections: settings.maxConnections.config,
  maxConnectionsPerAddress: settings.maxConnectionsPerAddress.config,
  logLevel: settings.logLevel.config,
  metrics: metricsSettings,
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
