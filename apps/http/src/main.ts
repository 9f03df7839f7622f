import { randomBytes } from "node:crypto"
import { describeStorageChoice, explainStorageFailure, storageLayer } from "@petstore/storage"
import { Effect, Either, Exit, Layer, ManagedRuntime, Option } from "effect"
import { createApp } from "./app.js"
import { firstStartKeyBanner, firstStartKeyLabel } from "./keys/first-start.js"
import { issueFirstApiKey } from "./keys/issue-api-key.js"
import * as StoredKeys from "./keys/StoredKeys.js"
import { readConfig } from "./config.js"
import { lifecycleLogger, processLogger } from "./logger.js"
import { effectLogsTo } from "./observability/effect-logs.js"
import { createMetrics } from "./observability/metrics.js"
import { apiServers } from "./openapi/servers.js"
import { createAppServer, defaultConnectionLimits, listen } from "./server.js"
import { shutdown } from "./shutdown.js"

/** How long shutdown waits for in-flight requests before cutting their connections. */
const shutdownGraceMs = 10_000
/** How long closing the storage may take after that, before the process exits anyway. */
const disposeDeadlineMs = 5_000

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

  const logger = processLogger(config.logLevel)
  const lifecycle = lifecycleLogger(logger)
  const metrics = config.metrics ? createMetrics() : undefined
  const runtime = ManagedRuntime.make(
    storageLayer(config.storage, {
      idempotencyTtl: config.idempotencyTtl,
      groupCommit: { observeBatchSize: metrics?.observeBatchSize },
    }).pipe(
      (storage) => Layer.provideMerge(StoredKeys.layer(), storage),
      // Last, so that every fiber the layers fork logs through it too.
      Layer.provide(effectLogsTo(logger)),
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

  const app = createApp({
    runtime,
    apiKeys,
    storedKeys,
    basePath: config.basePath,
    logger,
    metrics: metrics ?? false,
    servers: apiServers(config),
    limits: {
      perKey: Option.getOrUndefined(config.rateLimit),
      failedAuthPerAddress: Option.getOrUndefined(config.authFailureLimit),
      trustProxy: config.trustProxy,
    },
    ...Option.match(config.corsOrigins, {
      onNone: () => ({}),
      onSome: (corsOrigins) => ({ corsOrigins }),
    }),
  })
  const server = createAppServer(app.callback(), {
    ...defaultConnectionLimits,
    maxConnections: config.maxConnections,
  })
  const port = await listen(server, config.port, config.host).catch((error: unknown) =>
    fail(
      `cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`,
    ),
  )
  const origin = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`
  lifecycle.info(
    {
      url: `${origin}${config.basePath}`,
      docs: `${origin}/docs`,
      storage: describeStorageChoice(config.storage),
      apiKeys: apiKeys.length,
    },
    "petstore listening",
  )

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.error({ signal }, "second signal: exiting without finishing shutdown")
      process.exit(1)
    }
    stopping = true
    lifecycle.info({ signal }, "shutting down")
    void shutdown({
      server,
      runtime,
      logger,
      graceMs: shutdownGraceMs,
      disposeMs: disposeDeadlineMs,
    }).then((code) => {
      if (code === 0) lifecycle.info("stopped")
      process.exit(code)
    })
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

main().catch((error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
)
