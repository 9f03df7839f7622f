export * as MemoryPetRepository from "./MemoryPetRepository.js"
export * as SqlPetRepository from "./SqlPetRepository.js"
export * as SqlitePetRepository from "./SqlitePetRepository.js"
export * as PostgresPetRepository from "./PostgresPetRepository.js"
export {
  ApiKeyNotFound,
  ApiKeyStore,
  type ApiKeyRecord,
  type ApiKeyUse,
  type NewApiKey,
} from "./ApiKeyStore.js"
export * as MemoryApiKeyStore from "./MemoryApiKeyStore.js"
export * as SqlApiKeyStore from "./SqlApiKeyStore.js"
export { apiKeyStoreLayer } from "./api-key-store-selection.js"
export type { GroupCommitOptions } from "./group-commit.js"
export {
  defaultIdempotencyPurgeInterval,
  defaultIdempotencyTtl,
  type IdempotencyOptions,
} from "./idempotency.js"
export {
  describeStorageChoice,
  parseStorageChoice,
  storageLayer,
  type StorageChoice,
} from "./storage-selection.js"
export { explainStorageFailure } from "./storage-failure.js"
