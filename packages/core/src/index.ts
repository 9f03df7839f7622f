export { CategoryId, NewPet, Pet, PetId, PetName, PetStatus } from "./Pet.js"
export {
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  PetNotFound,
  StorageUnavailable,
} from "./errors.js"
export {
  IdempotencyKey,
  IdempotencyScope,
  petFingerprint,
  type Idempotency,
  type IdempotencyClaim,
} from "./Idempotency.js"
export {
  PetRepository,
  type CreatedPet,
  type PetSlice,
  type PetSlicePage,
} from "./PetRepository.js"
export { cursorAfter, maxCursorLength, PageCursor } from "./PageCursor.js"
export { IntegerText, IntFromString } from "./IntegerText.js"
export { defaultLimit, Limit, LimitFromString, maxLimit } from "./Limit.js"
export { ListPetsQuery } from "./ListPetsQuery.js"
export { listPets, type PetPage } from "./list-pets.js"
export { createPet } from "./create-pet.js"
export { getPet } from "./get-pet.js"
export { tracePetRepository, tracedPetRepositoryLayer } from "./repository-spans.js"

// API keys: what a key is, its format, and issuing one into the store's port.
export {
  ApiKeyNotFound,
  ApiKeyStore,
  type ApiKeyRecord,
  type ApiKeyUse,
  type NewApiKey,
} from "./keys/ApiKeyStore.js"
export {
  apiKeyPrefix,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  isWellFormedApiKey,
  looksLikeStoredKey,
} from "./keys/api-key-format.js"
export {
  ApiKeyLabel,
  issueApiKey,
  issueFirstApiKey,
  type IssuedApiKey,
} from "./keys/issue-api-key.js"
export { visible, visibleJson } from "./terminal-text.js"
