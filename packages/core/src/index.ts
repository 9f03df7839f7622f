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
