import { Config, Effect, Either, Option } from "effect"
import { serverUrls } from "./network.js"
import { metricsConfig } from "./observability.js"
import { overloadConfig } from "./overload.js"
import { messagesOf, providerOf, type Environment } from "./read-setting.js"
import { settings } from "./settings.js"
import { tracingConfig } from "./tracing.js"

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
  overload: overloadConfig,
  keepAliveTimeoutMs: settings.keepAliveTimeout.config,
  shutdown: Config.all({
    drainMs: settings.shutdownDrain.config,
    idleMs: settings.shutdownIdle.config,
    requestsMs: settings.shutdownRequests.config,
    storageMs: settings.shutdownStorage.config,
  }),
  logLevel: settings.logLevel.config,
  metrics: metricsConfig,
  probePort: settings.probePort.config,
  tracing: tracingConfig,
}).pipe(Config.map(({ urls, metrics, ...rest }) => ({ ...rest, ...urls, ...metrics })))

/**
 * The server's settings, each as its declaration reads it (`apiKeys` is empty when none is
 * configured: the server then generates one for the run).
 */
export type ServerConfig = Config.Config.Success<typeof serverConfig>

/** The server's settings from environment variables, or every problem found with them. */
export const readConfig = (env: Environment): Either.Either<ServerConfig, ReadonlyArray<string>> =>
  providerOf(env).load(serverConfig).pipe(Effect.either, Effect.runSync, Either.mapLeft(messagesOf))
