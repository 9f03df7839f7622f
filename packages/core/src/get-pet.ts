import { Effect, Option } from "effect"
import { PetNotFound } from "./errors.js"
import type { PetId } from "./Pet.js"
import { PetRepository } from "./PetRepository.js"

/** Fetches one pet by id, failing with `PetNotFound` when there is none. */
export const getPet = Effect.fn("getPet")(function* (id: PetId) {
  const repository = yield* PetRepository
  const pet = yield* repository.findById(id)
  return yield* Option.match(pet, {
    onNone: () => Effect.fail(new PetNotFound({ id })),
    onSome: (found) => Effect.succeed(found),
  })
})
