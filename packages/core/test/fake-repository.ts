import { Effect, Layer, Option } from "effect"
import {
  IdempotencyKeyReused,
  Pet,
  PetId,
  PetRepository,
  type CreatedPet,
  type NewPet,
} from "../src/index.js"

/** A deliberately naive repository: enough to exercise the use cases, no more. */
export const fakeRepository = (seed: ReadonlyArray<Pet> = []) =>
  Layer.sync(PetRepository, () => {
    const pets = [...seed]
    const keys = new Map<string, { readonly fingerprint: string; readonly pet: Pet }>()
    const store = (newPet: NewPet) => {
      const pet = new Pet({ ...newPet, id: PetId.make(pets.length + 1) })
      pets.push(pet)
      return pet
    }
    return PetRepository.of({
      create: (newPet) => Effect.sync(() => store(newPet)),
      // No expiry, no in-flight: a key is remembered for good.
      createOnce: (newPet, { scope, key, fingerprint }) =>
        Effect.suspend((): Effect.Effect<CreatedPet, IdempotencyKeyReused> => {
          const id = JSON.stringify([scope, key])
          const stored = keys.get(id)
          if (stored === undefined) {
            const pet = store(newPet)
            keys.set(id, { fingerprint, pet })
            return Effect.succeed({ pet, replayed: false })
          }
          return stored.fingerprint === fingerprint
            ? Effect.succeed({ pet: stored.pet, replayed: true })
            : Effect.fail(new IdempotencyKeyReused({ key }))
        }),
      findById: (id) => Effect.sync(() => Option.fromNullable(pets.find((pet) => pet.id === id))),
      list: ({ status, afterId, limit }) =>
        Effect.sync(() => {
          const matching = pets
            .filter((pet) => Option.getOrElse(afterId, () => 0) < pet.id)
            .filter((pet) => Option.isNone(status) || pet.status === status.value)
          return { pets: matching.slice(0, limit), hasMore: matching.length > limit }
        }),
    })
  })
