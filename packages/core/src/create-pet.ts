import { Effect } from "effect"
import type { NewPet } from "./Pet.js"
import { PetRepository } from "./PetRepository.js"

/** Adds a pet; the store assigns its id. */
export const createPet = Effect.fn("createPet")(function* (pet: NewPet) {
  const repository = yield* PetRepository
  return yield* repository.create(pet)
})
