import { Array, Effect, Option } from "effect"
import type { ListPetsQuery } from "./ListPetsQuery.js"
import type { Pet, PetId } from "./Pet.js"
import { PetRepository } from "./PetRepository.js"

export interface PetPage {
  readonly pets: ReadonlyArray<Pet>
  /** Where the next page starts, when more matching pets remain. */
  readonly next: Option.Option<PetId>
}

/** Lists pets in ascending id order, at most `limit` of them, optionally by status. */
export const listPets = Effect.fn("listPets")(function* (query: ListPetsQuery) {
  const repository = yield* PetRepository
  // One extra row tells whether another page exists without a second query.
  const rows = yield* repository.list({
    status: Option.fromNullable(query.status),
    afterId: Option.fromNullable(query.cursor),
    limit: query.limit + 1,
  })
  const pets = rows.slice(0, query.limit)
  const next =
    rows.length > query.limit ? Option.map(Array.last(pets), (pet) => pet.id) : Option.none()
  return { pets, next } satisfies PetPage
})
