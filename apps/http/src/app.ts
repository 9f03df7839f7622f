import Koa, { type Context } from "koa"
import { bearerAuth, type AuthState } from "./middleware/auth.js"
import { deprecation } from "./middleware/deprecation.js"
import { errorHandler } from "./middleware/error-handler.js"
import { silentLogger, type Logger } from "./logger.js"
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
  const getPetPath = new RegExp(`^${basePath.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/pets/[^/]+/?$`)

  app.use(errorHandler(logger))
  // Public routes: no API key needed.
  const health = healthRoutes()
  app.use(health.routes())
  app.use(health.allowedMethods())
  app.use(
    deprecation(
      (ctx: Context) =>
        (ctx.method === "GET" || ctx.method === "HEAD") && getPetPath.test(ctx.path),
      {
        ...getPetDeprecation,
        successor: `${basePath}/pets`,
      },
    ),
  )
  app.use(async (ctx, next) => (isUnder(basePath, ctx.path) ? requireKey(ctx, next) : next()))
  app.use(pets.routes())
  app.use(pets.allowedMethods())
  return app
}
