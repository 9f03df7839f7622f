import Koa from "koa"
import { createRouter, registerOperations, unrouted } from "./routes/router.js"
import type { ServedOperation } from "./operations/serve-operation.js"
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
import type { RequestTracing } from "./vocabulary/tracing.js"
import { metricsExposition } from "./observability/metrics-exposition.js"
import { registerMetricsRoute } from "./routes/metrics.js"
import { createMetrics, discardMetrics, type Metrics } from "./observability/metrics.js"
import { storageReadiness } from "./observability/readiness.js"
import { openApiDocument } from "./openapi/openapi-document.js"
import { registerOpenApiRoutes } from "./routes/openapi.js"
import type { ApiServer } from "./vocabulary/openapi-types.js"
import { sameOriginServers } from "./openapi/servers.js"
import { registerDocsRoutes } from "./routes/docs.js"
import { registerHealthRoute, registerReadinessRoute } from "./routes/health.js"

/**
 * The routes open to all, each served unless false. One turned off is like any path the app
 * does not know: 401 without a key, 404 with one. Under koa-mount they are under the mount path
 * too (`/petstore/healthz`), as every route of the app is.
 */
export interface PublicRoutes {
  /** `GET /healthz`: the process is up. */
  readonly health?: boolean
  /** `GET /readyz`: storage answers, and the process is not shutting down (`stopping`). */
  readonly readiness?: boolean
  /**
   * `GET /metrics`: the Prometheus exposition of `metrics` (never served when `metrics` is
   * false). The same switch as `metricsRoute`: the route is served only if neither is false.
   */
  readonly metrics?: boolean
  /**
   * `GET /docs` and the files its page loads: Swagger UI showing `{basePath}/openapi.json`, which
   * it loads from this app; with `document` off, something else has to serve it there.
   */
  readonly docs?: boolean
  /** `GET {basePath}/openapi.json`: the OpenAPI document. */
  readonly document?: boolean
}

export interface AppOptions {
  /** Provides the `PetRepository` the use cases run against; the caller owns its lifetime. */
  readonly runtime: PetRuntime
  /** The API keys accepted as `Authorization: Bearer <key>`; at least one unless `storedKeys` is given. */
  readonly apiKeys: ReadonlyArray<string>
  /** The keys kept in storage (`npm run keys`), accepted beside `apiKeys`; none unless given. */
  readonly storedKeys?: StoredKeys["Type"]
  /**
   * Where the versioned API is, within the app; `/v1` unless given. Mounted with koa-mount, the
   * client reaches it under the mount path as well (`/petstore/v1`).
   */
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
   * The same switch as `publicRoutes.metrics`: the route is served only if neither is false.
   */
  readonly metricsRoute?: boolean
  /** How long `GET /metrics` serves a rendering again, in ms; 0 (none) unless given. */
  readonly metricsReuseMs?: number
  /**
   * The base URLs `{basePath}/openapi.json` names, whatever the mount path; unless given, the
   * server serving it, by the path the client asked it under (`/v1`; `/petstore/v1` under
   * koa-mount at `/petstore`).
   */
  readonly servers?: ReadonlyArray<ApiServer>
  /**
   * The operations served, each a declaration joined with its handler (`serveOperation`); the
   * Petstore's three unless given.
   */
  readonly operations?: ReadonlyArray<ServedOperation>
  /**
   * Rate limits around the key check (per key, wrong keys per address) and the proxies trusted to
   * name the client's address; none unless given.
   */
  readonly limits?: AbuseLimits
  /** The origins CORS allows; no CORS unless given. */
  readonly corsOrigins?: CorsOrigins
  /** Which routes open to all the app serves; every one unless turned off here. */
  readonly publicRoutes?: PublicRoutes
  /**
   * Aborted when the process begins to shut down: `GET /readyz` answers 503 from then on, so that
   * load balancers stop sending requests while the server still answers them (`closeGracefully`'s
   * drain). Never aborted unless given.
   */
  readonly stopping?: AbortSignal
  /**
   * Traces every request, public routes and unknown paths included: one SERVER span each, a
   * child of the caller's span when it sends `traceparent`, with the operation's effect in a
   * span of its own beneath it, and `trace_id` and `span_id` on the request's log lines. For
   * OpenTelemetry, `otelRequestTracing(tracer)` from `@petstore/http/otel`. Nothing is traced,
   * and nothing paid, unless given.
   */
  readonly tracing?: RequestTracing
}

/**
 * The Petstore API as a Koa application. It neither listens nor reads the environment:
 * serve it with `http.createServer(app.callback())`, or mount it in another Koa app with
 * koa-mount (`host.use(mount("/petstore", app))`, a prefix without a trailing slash).
 *
 * Every path is decided by one router (exact, case-sensitive). Public routes (`/healthz`,
 * `/readyz`, `/metrics`, `/docs`, `{basePath}/openapi.json`; see `publicRoutes`) need no key;
 * every operation that needs one checks it in its own route, and any path the router does not
 * know needs a key before it is answered 404.
 *
 * Mounted, the app answers every path under its mount path, and every URL it writes starts with
 * that path (`ctx.mountPath`): `Location`, `Link`, the document's `servers` unless given, the
 * docs page's files and document, the access log's route. koa-mount is all it takes, so there
 * is no prefix option; a proxy that strips a prefix before the request arrives is not seen.
 * A host's body parser in front of the app is fine: what it parsed is used, and checked as the
 * app checks a body it reads itself (see `readJsonBody`).
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
  const publicRoutes = options.publicRoutes ?? {}
  if (publicRoutes.health !== false) registerHealthRoute(router)
  if (publicRoutes.readiness !== false) {
    registerReadinessRoute(router, storageReadiness(options.runtime, recorder), options.stopping)
  }
  if (metrics !== undefined && options.metricsRoute !== false && publicRoutes.metrics !== false) {
    registerMetricsRoute(
      router,
      metricsExposition(metrics.registry, { reuseMs: options.metricsReuseMs ?? 0 }),
    )
  }
  if (publicRoutes.document !== false) {
    registerOpenApiRoutes(router, basePath, (mountPath) => {
      const publicBasePath = `${mountPath}${basePath}`
      return openApiDocument({
        basePath: publicBasePath,
        servers: options.servers ?? sameOriginServers(publicBasePath),
        operations,
      })
    })
  }
  if (publicRoutes.docs !== false) registerDocsRoutes(router, basePath)
  registerOperations(
    router,
    operations,
    { runtime: options.runtime, recordStorageError: recorder.recordStorageError, basePath },
    keyRequired,
  )
  const protectedRoutes = new Set(
    operations.filter((operation) => operation.requiresKey).map((operation) => operation.id),
  )

  app.use(requestEdge(logger, recorder, limits.trustedProxies ?? noTrustedProxy, options.tracing))
  if (options.corsOrigins !== undefined) {
    app.use(
      cors(options.corsOrigins, [...new Set(operations.map((operation) => operation.method))]),
    )
  }
  app.use(router.routes())
  app.use(unrouted(protectedRoutes, keyRequired))
  return app
}
