import { Array, Effect, Option } from "effect"
import type { StorageUnavailable } from "./errors.js"
import type { ListPetsQuery } from "./ListPetsQuery.js"
import type { Pet, PetId } from "./Pet.js"
import { PetRepository } from "./PetRepository.js"

export interface PetPage {
  readonly pets: ReadonlyArray<Pet>
  /** Where the next page starts, when more matching pets remain. */
  readonly next: Option.Option<PetId>
}

/** Lists pets in ascending id order, at most `limit` of them, optionally by status. */
export const listPets = (
  query: ListPetsQuery,
): Effect.Effect<PetPage, StorageUnavailable, PetRepository> =>
  Effect.flatMap(PetRepository, (repository) =>
    Effect.map(
      repository.list({
        status: Option.fromNullable(query.status),
        afterId: Option.fromNullable(query.cursor),
        limit: query.limit,
      }),
      ({ pets, hasMore }) => ({
        pets,
        next: hasMore ? Option.map(Array.last(pets), (pet) => pet.id) : Option.none(),
      }),
    ),
  )
