import { Effect, Layer, Option } from "effect"
import { Pet, PetId, PetRepository, type PetStatus } from "@petstore/core"

/** Index of the first pet in `pets` (sorted by ascending id) whose id is greater than `id`. */
const indexAfter = (pets: ReadonlyArray<Pet>, id: number): number => {
  let low = 0
  let high = pets.length
  while (low < high) {
    const middle = (low + high) >>> 1
    const middleId = pets[middle]?.id ?? Number.POSITIVE_INFINITY
    if (middleId <= id) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * Pets kept in this process's memory, lost when it exits. Ids are assigned in increasing
 * order and each pet is appended to the listing of all pets and to that of its status, so
 * every listing is sorted by id and a page costs O(log n + limit). Each operation runs
 * synchronously to completion, so concurrent fibers never see a half-made write.
 */
export const make = (): Effect.Effect<PetRepository["Type"]> =>
  Effect.sync(() => {
    const byId = new Map<number, Pet>()
    const all: Array<Pet> = []
    const byStatus = new Map<PetStatus, Array<Pet>>()
    let lastId = 0

    const listingOf = (status: PetStatus) => {
      const existing = byStatus.get(status)
      if (existing) return existing
      const created: Array<Pet> = []
      byStatus.set(status, created)
      return created
    }

    return PetRepository.of({
      create: (newPet) =>
        Effect.sync(() => {
          lastId += 1
          const pet = new Pet({ ...newPet, id: PetId.make(lastId) })
          byId.set(pet.id, pet)
          all.push(pet)
          if (pet.status !== undefined) listingOf(pet.status).push(pet)
          return pet
        }),
      findById: (id) => Effect.sync(() => Option.fromNullable(byId.get(id))),
      list: ({ status, afterId, limit }) =>
        Effect.sync(() => {
          const listing = Option.match(status, {
            onNone: () => all,
            onSome: (wanted) => byStatus.get(wanted) ?? [],
          })
          const start = Option.match(afterId, {
            onNone: () => 0,
            onSome: (id) => indexAfter(listing, id),
          })
          return listing.slice(start, start + limit)
        }),
    })
  })

export const layer: Layer.Layer<PetRepository> = Layer.effect(PetRepository, make())
