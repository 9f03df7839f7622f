import Koa, { type Context } from "koa"
import { escapeRegExp } from "./escape-regexp.js"
import { bearerAuth, type AuthState } from "./middleware/auth.js"
import { deprecation } from "./middleware/deprecation.js"
import { errorHandler } from "./middleware/error-handler.js"
import { silentLogger, type Logger } from "./logger.js"
import { openApiDocument } from "./openapi/openapi-document.js"
import { openApiRoutes } from "./openapi/openapi-routes.js"
import type { ApiServer } from "./openapi/openapi-types.js"
import { sameOriginServers } from "./openapi/servers.js"
import { docsRoutes } from "./routes/docs.js"
import { healthRoutes } from "./routes/health.js"
import { petRoutes, type PetRuntime } from "./routes/pets.js"

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
}

/** `GET /pets/{petId}` is deprecated: to be removed on 5 December 2030. */
export const getPetDeprecation = {
  since: new Date("2026-11-22T00:00:00Z"),
  sunset: new Date("2030-12-05T00:00:00Z"),
}

const isUnder = (basePath: string, path: string) =>
  basePath === "" || path === basePath || path.startsWith(`${basePath}/`)

/**
 * The Petstore API as a Koa application. It neither listens nor reads the environment:
 * serve it with `http.createServer(app.callback())`.
 */
export const createApp = (options: AppOptions): Koa<AuthState> => {
  const basePath = options.basePath ?? "/v1"
  const logger = options.logger ?? silentLogger
  const app = new Koa<AuthState>()
  app.silent = true

  const pets = petRoutes(options.runtime, basePath)
  const requireKey = bearerAuth(options.apiKeys)
  const getPetPath = new RegExp(`^${escapeRegExp(basePath)}/pets/[^/]+/?$`)

  const document = openApiDocument({
    basePath,
    servers: options.servers ?? sameOriginServers(basePath),
    getPetDeprecation,
  })
  const publicRouters = [healthRoutes(), openApiRoutes(basePath, document), docsRoutes(basePath)]
  const isGetPet = (ctx: Context) =>
    (ctx.method === "GET" || ctx.method === "HEAD") && getPetPath.test(ctx.path)

  app.use(errorHandler(logger))
  for (const router of publicRouters) {
    app.use(router.routes())
    app.use(router.allowedMethods())
  }
  app.use(deprecation(isGetPet, { ...getPetDeprecation, successor: `${basePath}/pets` }))
  app.use(async (ctx, next) => (isUnder(basePath, ctx.path) ? requireKey(ctx, next) : next()))
  app.use(pets.routes())
  app.use(pets.allowedMethods())
  return app
}
