import { parseStorageChoice, type StorageChoice } from "@petstore/storage"
import { Config, ConfigError, ConfigProvider, Duration, Effect, Either, Option } from "effect"

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

/** RFC 6750 §2.1 b64token: what a bearer token, and so an API key, may be. */
export const bearerTokenPattern = /^[A-Za-z0-9\-._~+/]+=*$/

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

const readPort = (text: string): Either.Either<number, string> => {
  const port = Number(text)
  return /^[0-9]+$/.test(text) && port <= 65535
    ? Either.right(port)
    : Either.left(`PORT must be an integer from 0 to 65535; got ${JSON.stringify(text)}`)
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
    whenUnset: "a key is generated and printed at start",
    description:
      "Comma-separated API keys accepted as `Authorization: Bearer <key>`. Letters, digits and `-._~+/` only.",
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
}

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
}).pipe(Config.map(({ urls, ...rest }) => ({ ...rest, ...urls })))

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
