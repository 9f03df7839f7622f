export { createApp, type AppOptions, type PublicRoutes } from "./app.js"
export type { PetRuntime } from "./vocabulary/runtime.js"

// Operations: declared once (data only), served with their handlers, documented by the document.
export {
  defineOperation,
  noBody,
  noContent,
  noHeaders,
  noParameters,
  type Handler,
  type HttpMethod,
  type Operation,
  type OperationSpec,
  type RequestContext,
} from "./operations/operation.js"
export { serveOperation, type ServedOperation } from "./operations/serve-operation.js"
export { petOperations, servePetOperations } from "./operations/pet-operations.js"
export { schemaCodec, type SchemaCodec } from "./codecs/schema-codec.js"
export { errorCatalogue, errorCodes, type ErrorCode } from "./vocabulary/error-catalogue.js"
export { apiError, type ApiError } from "./vocabulary/api-error.js"
export { maxBodyBytes, maxJsonDepth } from "./vocabulary/body-limits.js"
export { bearerTokenPattern, retryAfterSeconds } from "./vocabulary/headers.js"

// The OpenAPI document.
export { openApiDocument, type OpenApiInput } from "./openapi/openapi-document.js"
export { apiServers, sameOriginServers, type ServerUrls } from "./openapi/servers.js"
export type {
  ApiServer,
  JsonObject,
  JsonSchema,
  JsonValue,
  OpenApiDocument,
} from "./vocabulary/openapi-types.js"

// API keys kept in storage: the key check's cache in front of the store. What a key is, its
// format and issuing one are @petstore/core's, re-exported here for those who imported them here.
export * as StoredKeys from "./keys/StoredKeys.js"
export {
  apiKeyPrefix,
  ApiKeyLabel,
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  issueApiKey,
  issueFirstApiKey,
  looksLikeStoredKey,
  type IssuedApiKey,
} from "@petstore/core"

// Abuse limits and the client's address.
export type { AbuseLimits } from "./middleware/abuse-limits.js"
export {
  anyPeerIsProxy,
  isNamedProxy,
  clientAddress,
  noTrustedProxy,
  trustedProxies,
  type TrustedProxies,
} from "./request/client-address.js"
export type { BucketStore, Buckets } from "./limits/Buckets.js"
export { memoryBucketStore, memoryBuckets } from "./limits/memory-buckets.js"
export {
  monotonicClock,
  type Clock,
  type Decision,
  type Rate,
  type RefusalScope,
} from "./limits/rate.js"
export type { CorsOrigins } from "./middleware/cors.js"

// Logs and metrics.
export {
  createLogger,
  describeCause,
  lifecycleLogger,
  logLevels,
  silentLogger,
  type Logger,
  type LogLevel,
  type StdStream,
} from "./vocabulary/logger.js"
export { createMetrics, type Metrics, type MetricsOptions } from "./observability/metrics.js"
export {
  storageReadiness,
  type Readiness,
  type ReadinessOptions,
} from "./observability/readiness.js"
export {
  metricsExposition,
  type ExpositionOptions,
  type MetricsExposition,
} from "./observability/metrics-exposition.js"
export { visible, visibleJson } from "@petstore/core"

// Traces: the app's side; OpenTelemetry's is `otelRequestTracing` from `@petstore/http/otel`.
export type {
  RequestOutcome,
  RequestSpan,
  RequestTracing,
  SpanAttributes,
  SpanValue,
} from "./vocabulary/tracing.js"
