export { CategoryId, NewPet, Pet, PetId, PetName, PetStatus } from "./Pet.js"
export { PetNotFound, StorageUnavailable } from "./errors.js"
export { PetRepository, type PetSlice } from "./PetRepository.js"
export { PageCursor } from "./PageCursor.js"
export {
  defaultLimit,
  IntFromString,
  Limit,
  LimitFromString,
  ListPetsQuery,
  maxLimit,
} from "./ListPetsQuery.js"
export { listPets, type PetPage } from "./list-pets.js"
export { createPet } from "./create-pet.js"
export { getPet } from "./get-pet.js"
