import { Effect, Option } from "effect"
import { PetNotFound, type StorageUnavailable } from "./errors.js"
import type { Pet, PetId } from "./Pet.js"
import { PetRepository } from "./PetRepository.js"

/** Fetches one pet by id, failing with `PetNotFound` when there is none. */
export const getPet = (
  id: PetId,
): Effect.Effect<Pet, PetNotFound | StorageUnavailable, PetRepository> =>
  Effect.flatMap(PetRepository, (repository) =>
    Effect.flatMap(repository.findById(id), (pet) =>
      Option.match(pet, {
        onNone: () => Effect.fail(new PetNotFound({ id })),
        onSome: (found) => Effect.succeed(found),
      }),
    ),
  )
