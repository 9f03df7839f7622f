import Koa from "koa"
import { createRouter, registerOperations, unrouted } from "./api/api-router.js"
import type { Operation, PetRuntime } from "./api/operation.js"
import { petOperations } from "./api/pet-operations.js"
import { bearerAuth, type AuthState } from "./middleware/auth.js"
import { errorHandler } from "./middleware/error-handler.js"
import { silentLogger, type Logger } from "./logger.js"
import { openApiDocument } from "./openapi/openapi-document.js"
import { registerOpenApiRoutes } from "./openapi/openapi-routes.js"
import type { ApiServer } from "./openapi/openapi-types.js"
import { sameOriginServers } from "./openapi/servers.js"
import { registerDocsRoutes } from "./routes/docs.js"
import { registerHealthRoutes } from "./routes/health.js"

export interface AppOptions {
  /** Provides the `PetRepository` the use cases run against; the caller owns its lifetime. */
  readonly runtime: PetRuntime
  /** The API keys accepted as `Authorization: Bearer <key>`; at least one. */
  readonly apiKeys: ReadonlyArray<string>
  /** Where the versioned API is mounted; `/v1` unless given. */
  readonly basePath?: string
  readonly logger?: Logger
  /** The base URLs `{basePath}/openapi.json` names; unless given, the server serving it. */
  readonly servers?: ReadonlyArray<ApiServer>
  /** The operations served; the Petstore's three unless given. */
  readonly operations?: ReadonlyArray<Operation>
}

/**
 * The Petstore API as a Koa application. It neither listens nor reads the environment:
 * serve it with `http.createServer(app.callback())`.
 *
 * Every path is decided by one router (exact, case-sensitive). Public routes (`/healthz`,
 * `/docs`, `{basePath}/openapi.json`) need no key; every operation that needs one checks it in
 * its own route, and any path the router does not know needs a key before it is answered 404.
 */
export const createApp = (options: AppOptions): Koa<AuthState> => {
  const basePath = options.basePath ?? "/v1"
  const logger = options.logger ?? silentLogger
  const operations = options.operations ?? petOperations
  const app = new Koa<AuthState>()
  app.silent = true

  const requireKey = bearerAuth(options.apiKeys)
  const router = createRouter()
  const document = openApiDocument({
    basePath,
    servers: options.servers ?? sameOriginServers(basePath),
    operations,
  })
  registerHealthRoutes(router)
  registerOpenApiRoutes(router, basePath, document)
  registerDocsRoutes(router, basePath)
  registerOperations(router, operations, { runtime: options.runtime, logger, basePath }, requireKey)
  const protectedRoutes = new Set(
    operations.filter((operation) => operation.requiresKey).map((operation) => operation.id),
  )

  app.use(errorHandler(logger))
  app.use(router.routes())
  app.use(unrouted(protectedRoutes, requireKey))
  return app
}
