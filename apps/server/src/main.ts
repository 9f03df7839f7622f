import { randomBytes } from "node:crypto"
import { explainStorageFailure } from "./storage/explain-storage-failure.js"
import { describeStorageChoice, storageLayer } from "./storage/storage-selection.js"
import { Effect, Either, Exit, Layer, ManagedRuntime, Option } from "effect"
import {
  createApp,
  issueFirstApiKey,
  StoredKeys,
  memoryBucketStore,
  describeCause,
  lifecycleLogger,
  metricsExposition,
  createMetrics,
  apiServers,
  isNamedProxy,
  storageReadiness,
} from "@petstore/http"
import { firstStartKeyBanner, firstStartKeyLabel } from "./keys/first-start.js"
import { readConfig } from "./settings/read-config.js"
import { redisBucketStore } from "@petstore/http/redis"
import { processLogger } from "./logs/process-logger.js"
import { effectLogsTo } from "./logs/effect-logs.js"
import { createServer, listen, serveMetrics, serveProbes } from "@petstore/http/node"
import { shutdown } from "./server/shutdown.js"
import { startTracing } from "./tracing/start-tracing.js"
import { describeTracingChoice } from "./tracing/tracing-choice.js"

/** A `PETSTORE_API_KEYS` key shorter than this is warned about: it may be guessed. */
const guessableKeyLength = 32
/** How long start-up waits for `PETSTORE_REDIS_URL` to connect before serving without it. */
const redisConnectWaitMs = 2_000
/** How long the log lines still waiting may take to leave at exit: a stalled reader gets no more. */
const logFlushDeadlineMs = 1_000
/** How long one rendering of `GET /metrics` is served again (see `metricsExposition`). */
const metricsReuseMs = 1_000

const fail = (message: string): never => {
  process.stderr.write(`petstore: ${message}\n`)
  process.exit(1)
}

/** With no key configured the server must not run open: it makes one and shows it once. */
const generatedKey = (): string => {
  const key = randomBytes(32).toString("base64url")
  process.stdout.write(
    [
      "",
      "  No API key is configured (PETSTORE_API_KEYS is empty), so one was generated for this run:",
      "",
      `    ${key}`,
      "",
      `  Send it as:  Authorization: Bearer ${key}`,
      "  It changes at every start; set PETSTORE_API_KEYS to keep a key of your own.",
      "",
      "",
    ].join("\n"),
  )
  return key
}

const main = async () => {
  const config = Either.getOrElse(readConfig(process.env), (problems) =>
    fail(`invalid configuration:\n  ${problems.join("\n  ")}`),
  )
  // Durable storage keeps the key made on a first start (below); memory can keep none.
  const apiKeys =
    config.apiKeys.length > 0 || config.storage.kind !== "memory"
      ? config.apiKeys
      : [generatedKey()]

  const metrics = config.metrics ? createMetrics() : undefined
  const logging = processLogger(config.logLevel, (stream) => metrics?.recordLogLineDropped(stream))
  const logger = logging.logger
  const lifecycle = lifecycleLogger(logger)
  // Off (the default), no module of the OpenTelemetry SDK is even loaded.
  const tracing = await startTracing(config.tracing, logger)
  const runtime = ManagedRuntime.make(
    storageLayer(config.storage, {
      idempotencyTtl: config.idempotencyTtl,
      groupCommit: { observeBatchSize: metrics?.observeBatchSize },
    }).pipe(
      (storage) =>
        tracing === undefined ? storage : Layer.provideMerge(tracing.repositorySpans, storage),
      (storage) => Layer.provideMerge(StoredKeys.layer(), storage),
      // Last, so that every fiber the layers fork logs (and traces) through them too.
      Layer.provide(
        tracing === undefined
          ? effectLogsTo(logger)
          : Layer.merge(effectLogsTo(logger, { traceIds: true }), tracing.tracerLayer),
      ),
    ),
  )
  const opened = await Effect.runPromiseExit(runtime.runtimeEffect)
  if (Exit.isFailure(opened)) fail(explainStorageFailure(config.storage, opened.cause))
  if (apiKeys.length === 0) {
    const first = await runtime.runPromiseExit(issueFirstApiKey(firstStartKeyLabel))
    if (Exit.isFailure(first)) {
      fail(explainStorageFailure(config.storage, first.cause))
    } else if (Option.isSome(first.value)) {
      process.stdout.write(firstStartKeyBanner(first.value.value))
    }
  }
  const storedKeys = await runtime.runPromise(StoredKeys.StoredKeys)
  config.apiKeys.forEach((key, index) => {
    if (key.length >= guessableKeyLength) return
    logger.warn(
      { keyId: `env:${index + 1}`, length: key.length },
      `PETSTORE_API_KEYS key ${index + 1} is short enough to guess: use it for development only`,
    )
  })
  const sharedLimits = Option.getOrUndefined(
    Option.map(config.redisUrl, (url) =>
      redisBucketStore({
        url,
        keyPrefix: config.redisPrefix,
        fallback: memoryBucketStore(),
        onOutage: (cause) => {
          metrics?.recordLimitStoreOutage()
          logger.warn(
            { cause: describeCause(cause) },
            "Redis is not answering: each process keeps its own limits until it does",
          )
        },
        onRecovery: () => logger.info("Redis answers again: the limits are shared again"),
        onFallback: () => metrics?.recordLimitDecidedLocally(),
      }),
    ),
  )
  // The first requests find the limits shared; a Redis that is not there yet is not waited for.
  await sharedLimits?.connected(redisConnectWaitMs)

  // Aborted on SIGTERM or SIGINT: `/readyz` answers 503 while the server still serves (see shutdown).
  const notReady = new AbortController()
  const app = createApp({
    runtime,
    stopping: notReady.signal,
    apiKeys,
    storedKeys,
    basePath: config.basePath,
    logger,
    metrics: metrics ?? false,
    metricsRoute: Option.isNone(config.metricsPort),
    metricsReuseMs,
    servers: apiServers(config),
    limits: {
      perKey: Option.getOrUndefined(config.rateLimit),
      failedAuthPerAddress: Option.getOrUndefined(config.authFailureLimit),
      trustedProxies: config.trustedProxies,
      store: sharedLimits?.store,
    },
    ...Option.match(config.corsOrigins, {
      onNone: () => ({}),
      onSome: (corsOrigins) => ({ corsOrigins }),
    }),
    ...(tracing === undefined ? {} : { tracing: tracing.requestTracing }),
  })
  const server = createServer(app, {
    limits: {
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnections: config.maxConnections,
      maxConnectionsPerAddress: Option.getOrUndefined(config.maxConnectionsPerAddress),
    },
    logger,
    // A named proxy's connections are its clients': they are not one address's.
    isTrustedProxy: isNamedProxy(config.trustedProxies),
    overload: Option.getOrElse(config.overload, () => false as const),
    ...(metrics === undefined
      ? {}
      : { recordRefusal: metrics.recordEdgeRefusal, watchOverload: metrics.watchOverload }),
  })
  const port = await listen(server, config.port, config.host).catch((error: unknown) =>
    fail(
      `cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`,
    ),
  )
  const metricsPort = Option.getOrUndefined(config.metricsPort)
  const metricsServer =
    metrics === undefined || metricsPort === undefined
      ? undefined
      : await serveMetrics(
          metricsExposition(metrics.registry, { reuseMs: metricsReuseMs }),
          metricsPort,
          config.host,
          { logger, recordRefusal: metrics.recordEdgeRefusal },
        ).catch((error: unknown) =>
          fail(
            `cannot listen on ${config.host}:${metricsPort} for metrics: ${describeCause(error)}`,
          ),
        )
  const probePort = Option.getOrUndefined(config.probePort)
  const probes =
    probePort === undefined
      ? undefined
      : await serveProbes({
          port: probePort,
          host: config.host,
          readiness: storageReadiness(runtime, metrics),
          stopping: notReady.signal,
          logger,
          servers: [server],
        }).catch((error: unknown) =>
          fail(`cannot listen on ${config.host}:${probePort} for probes: ${describeCause(error)}`),
        )
  const originAt = (port: number) =>
    `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`
  const origin = originAt(port)

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.error({ signal }, "second signal: exiting without finishing shutdown")
      process.exit(1)
    }
    stopping = true
    // A terminal's Ctrl-C: nobody balances it, so nobody needs the time to notice.
    const interactive = signal === "SIGINT"
    const steps = {
      drainMs: interactive ? 0 : config.shutdown.drainMs,
      idleMs: interactive ? 0 : config.shutdown.idleMs,
      graceMs: config.shutdown.requestsMs,
      disposeMs: config.shutdown.storageMs,
    }
    lifecycle.info({ signal, ...steps }, "shutting down")
    void shutdown({
      server,
      metricsServer: metricsServer?.server,
      runtime,
      logger,
      notReady,
      ...steps,
      tracing,
    }).then(async (code) => {
      void sharedLimits?.close()
      if (code === 0) lifecycle.info("stopped")
      await logging.flush(logFlushDeadlineMs)
      process.exit(code)
    })
  }
  // Before the line that tells orchestrators and tests the server is ready: a signal sent the
  // moment they read it must find its handler.
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)

  lifecycle.info(
    {
      url: `${origin}${config.basePath}`,
      docs: `${origin}/docs`,
      ...(metrics === undefined
        ? {}
        : {
            metrics: `${metricsServer === undefined ? origin : originAt(metricsServer.port)}/metrics`,
          }),
      ...(probes === undefined ? {} : { probes: originAt(probes.port) }),
      storage: describeStorageChoice(config.storage),
      tracing: describeTracingChoice(config.tracing),
      apiKeys: apiKeys.length,
    },
    "petstore listening",
  )
}

main().catch((error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
)
