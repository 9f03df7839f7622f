import { randomBytes } from "node:crypto"
import { describeStorageChoice, explainStorageFailure, storageLayer } from "@petstore/storage"
import { Effect, Either, Exit, ManagedRuntime } from "effect"
import { createApp } from "./app.js"
import { readConfig } from "./config.js"
import { jsonLinesLogger as logger } from "./logger.js"
import { apiServers } from "./openapi/servers.js"
import { createAppServer, listen } from "./server.js"
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
  const apiKeys = config.apiKeys.length > 0 ? config.apiKeys : [generatedKey()]

  const runtime = ManagedRuntime.make(
    storageLayer(config.storage, { idempotencyTtl: config.idempotencyTtl }),
  )
  const opened = await Effect.runPromiseExit(runtime.runtimeEffect)
  if (Exit.isFailure(opened)) fail(explainStorageFailure(config.storage, opened.cause))

  const app = createApp({
    runtime,
    apiKeys,
    basePath: config.basePath,
    logger,
    servers: apiServers(config),
  })
  const server = createAppServer(app.callback())
  const port = await listen(server, config.port, config.host).catch((error: unknown) =>
    fail(
      `cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`,
    ),
  )
  logger.info("petstore listening", {
    url: `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}${config.basePath}`,
    storage: describeStorageChoice(config.storage),
    apiKeys: apiKeys.length,
  })

  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.error("second signal: exiting without finishing shutdown", { signal })
      process.exit(1)
    }
    stopping = true
    logger.info("shutting down", { signal })
    void shutdown({
      server,
      runtime,
      logger,
      graceMs: shutdownGraceMs,
      disposeMs: disposeDeadlineMs,
    }).then((code) => {
      if (code === 0) logger.info("stopped")
      process.exit(code)
    })
  }
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
}

main().catch((error: unknown) =>
  fail(error instanceof Error ? (error.stack ?? error.message) : String(error)),
)
