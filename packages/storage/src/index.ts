export * as MemoryPetRepository from "./MemoryPetRepository.js"
export {
  ApiKeyNotFound,
  ApiKeyStore,
  type ApiKeyRecord,
  type ApiKeyUse,
  type NewApiKey,
} from "@petstore/core"
export * as MemoryApiKeyStore from "./MemoryApiKeyStore.js"
export {
  defaultIdempotencyPurgeInterval,
  defaultIdempotencyTtl,
  type IdempotencyOptions,
} from "./idempotency-retention.js"
export { storageFailureReasons } from "./storage-failure-reasons.js"
