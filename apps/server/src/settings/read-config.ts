import { Config, ConfigError, ConfigProvider, Effect, Either, Option } from "effect"
import { serverUrls } from "./network.js"
import { metricsConfig } from "./observability.js"
import type { Setting } from "./setting.js"
import { settings } from "./settings.js"
import { tracingConfig } from "./tracing.js"

type Environment = Readonly<Record<string, string | undefined>>

const serverConfig = Config.all({
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
  metrics: metricsConfig,
  tracing: tracingConfig,
}).pipe(Config.map(({ urls, metrics, ...rest }) => ({ ...rest, ...urls, ...metrics })))

/**
 * The server's settings, each as its declaration reads it (`apiKeys` is empty when none is
 * configured: the server then generates one for the run).
 */
export type ServerConfig = Config.Config.Success<typeof serverConfig>

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
