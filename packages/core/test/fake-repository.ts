import { Effect, Layer, Option } from "effect"
import { Pet, PetId, PetRepository } from "../src/index.js"

/** A deliberately naive repository: enough to exercise the use cases, no more. */
export const fakeRepository = (seed: ReadonlyArray<Pet> = []) =>
  Layer.sync(PetRepository, () => {
    const pets = [...seed]
    return PetRepository.of({
      create: (newPet) =>
        Effect.sync(() => {
          const pet = new Pet({ ...newPet, id: PetId.make(pets.length + 1) })
          pets.push(pet)
          return pet
        }),
      findById: (id) => Effect.sync(() => Option.fromNullable(pets.find((pet) => pet.id === id))),
      list: ({ status, afterId, limit }) =>
        Effect.sync(() =>
          pets
            .filter((pet) => Option.getOrElse(afterId, () => 0) < pet.id)
            .filter((pet) => Option.isNone(status) || pet.status === status.value)
            .slice(0, limit),
        ),
    })
  })
