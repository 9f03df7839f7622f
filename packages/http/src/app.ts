import Koa from "koa"
import { createRouter, registerOperations, unrouted } from "./routes/router.js"
import type { Operation } from "./operations/operation.js"
import type { PetRuntime } from "./vocabulary/runtime.js"
import type { RequestState } from "./vocabulary/request-state.js"
import { petOperations } from "./operations/pet-operations.js"
import { noTrustedProxy } from "./request/client-address.js"
import type { StoredKeys } from "./keys/StoredKeys.js"
import { configuredLimits, type AbuseLimits } from "./middleware/abuse-limits.js"
import { credentialsReader } from "./middleware/auth.js"
import { cors, type CorsOrigins } from "./middleware/cors.js"
import { requestEdge } from "./middleware/request-edge.js"
import { requireKey } from "./middleware/require-key.js"
import { silentLogger, type Logger } from "./vocabulary/logger.js"
import { metricsExposition } from "./observability/metrics-exposition.js"
import { registerMetricsRoute } from "./routes/metrics.js"
import { createMetrics, discardMetrics, type Metrics } from "./observability/metrics.js"
import { storageReadiness } from "./observability/readiness.js"
import { openApiDocument } from "./openapi/openapi-document.js"
import { registerOpenApiRoutes } from "./routes/openapi.js"
import type { ApiServer } from "./vocabulary/openapi-types.js"
import { sameOriginServers } from "./openapi/servers.js"
import { registerDocsRoutes } from "./routes/docs.js"
import { registerHealthRoutes } from "./routes/health.js"

export interface AppOptions {
  /** Provides the `PetRepository` the use cases run against; the caller owns its lifetime. */
  readonly runtime: PetRuntime
  /** The API keys accepted as `Authorization: Bearer <key>`; at least one unless `storedKeys` is given. */
  readonly apiKeys: ReadonlyArray<string>
  /** The keys kept in storage (`npm run keys`), accepted beside `apiKeys`; none unless given. */
  readonly storedKeys?: StoredKeys["Type"]
  /** Where the versioned API is mounted; `/v1` unless given. */
  readonly basePath?: string
  /** Where access lines and warnings go; nowhere unless given. */
  readonly logger?: Logger
  /**
   * What `GET /metrics` exposes and the app records into; a registry of its own unless given
   * (give one to also record what the storage layer observes). `false`: no metrics, no route.
   */
  readonly metrics?: Metrics | false
  /**
   * Whether this app serves `GET /metrics`; true unless false. `false`: the app still records
   * into `metrics`, and something else serves them (the server's metrics port, `metricsListener`).
   */
  readonly metricsRoute?: boolean
  /** How long `GET /metrics` serves a rendering again, in ms; 0 (none) unless given. */
  readonly metricsReuseMs?: number
  /** The base URLs `{basePath}/openapi.json` names; unless given, the server serving it. */
  readonly servers?: ReadonlyArray<ApiServer>
  /** The operations served; the Petstore's three unless given. */
  readonly operations?: ReadonlyArray<Operation>
  /**
   * Rate limits around the key check (per key, wrong keys per address) and the proxies trusted to
   * name the client's address; none unless given.
   */
  readonly limits?: AbuseLimits
  /** The origins CORS allows; no CORS unless given. */
  readonly corsOrigins?: CorsOrigins
}

/**
 * The Petstore API as a Koa application. It neither listens nor reads the environment:
 * serve it with `http.createServer(app.callback())`.
 *
 * Every path is decided by one router (exact, case-sensitive). Public routes (`/healthz`,
 * `/readyz`, `/metrics` unless `metricsRoute` is false, `/docs`, `{basePath}/openapi.json`) need
 * no key; every operation that needs one checks it in its own route, and any path the router
 * does not know needs a key before it is answered 404.
 */
export const createApp = (options: AppOptions): Koa<RequestState> => {
  const basePath = options.basePath ?? "/v1"
  const logger = options.logger ?? silentLogger
  const operations = options.operations ?? petOperations
  const metrics = options.metrics === false ? undefined : (options.metrics ?? createMetrics())
  const recorder = metrics ?? discardMetrics
  const app = new Koa<RequestState>()
  app.silent = true

  const limits = options.limits ?? {}
  const keyRequired = requireKey({
    credentials: credentialsReader(options.apiKeys, options.storedKeys),
    ...configuredLimits(limits),
    onRefusal: (scope) => {
      recorder.recordRateLimitRefusal(scope)
      limits.onRefusal?.(scope)
    },
  })
  const router = createRouter()
  const document = openApiDocument({
    basePath,
    servers: options.servers ?? sameOriginServers(basePath),
    operations,
  })
  registerHealthRoutes(router, storageReadiness(options.runtime, recorder))
  if (metrics !== undefined && options.metricsRoute !== false) {
    registerMetricsRoute(
      router,
      metricsExposition(metrics.registry, { reuseMs: options.metricsReuseMs ?? 0 }),
    )
  }
  registerOpenApiRoutes(router, basePath, document)
  registerDocsRoutes(router, basePath)
  registerOperations(
    router,
    operations,
    { runtime: options.runtime, recordStorageError: recorder.recordStorageError, basePath },
    keyRequired,
  )
  const protectedRoutes = new Set(
    operations.filter((operation) => operation.requiresKey).map((operation) => operation.id),
  )

  app.use(requestEdge(logger, recorder, limits.trustedProxies ?? noTrustedProxy))
  if (options.corsOrigins !== undefined) {
    app.use(
      cors(options.corsOrigins, [...new Set(operations.map((operation) => operation.method))]),
    )
  }
  app.use(router.routes())
  app.use(unrouted(protectedRoutes, keyRequired))
  return app
}
