export { createApp, type AppOptions } from "./app.js"
export type { AbuseLimits } from "./middleware/abuse-limits.js"
export {
  anyPeerIsProxy,
  noTrustedProxy,
  trustedProxies,
  type TrustedProxies,
} from "./client-address.js"
export type { BucketStore, Buckets } from "./limits/Buckets.js"
export { memoryBucketStore } from "./limits/memory-buckets.js"
export { redisBucketStore, type RedisBucketStoreOptions } from "./limits/redis-buckets.js"
export { readConfig, type ServerConfig } from "./config.js"
export { createLogger, processLogger, silentLogger, type Logger, type LogLevel } from "./logger.js"
export { createMetrics, type Metrics } from "./observability/metrics.js"
export { closeGracefully, createAppServer, listen } from "./server.js"
export { errorCatalogue, type ErrorCode } from "./api/error-catalogue.js"
export {
  defineOperation,
  type Operation,
  type OperationSpec,
  type PetRuntime,
} from "./api/operation.js"
export { petOperations } from "./api/pet-operations.js"
