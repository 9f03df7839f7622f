import { PetRepository } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { Effect, Layer } from "effect"

/**
 * The memory store, counting its listings (what a readiness probe and `GET /v1/pets` ask): so a
 * test can tell whether a request reached storage. `onList` runs at each, before it lists.
 */
export const countingStore = (onList: () => void = () => {}) => {
  let lists = 0
  const layer = Layer.effect(
    PetRepository,
    Effect.map(PetRepository, (pets) =>
      PetRepository.of({
        ...pets,
        list: (slice) =>
          Effect.zipRight(
            Effect.sync(() => {
              lists += 1
              onList()
            }),
            pets.list(slice),
          ),
      }),
    ),
  ).pipe(Layer.provide(MemoryPetRepository.layer))
  return { layer, lists: () => lists }
}
