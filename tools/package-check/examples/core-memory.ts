import { CategoryId, createPet, getPet, Limit, listPets, NewPet } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { Effect } from "effect"

// Each use case states its failures and its one requirement, a PetRepository, in its type.
const program = Effect.gen(function* () {
  const { pet } = yield* createPet(
    NewPet.make({ name: "Rex", categoryId: CategoryId.make(1), status: "available" }),
  )
  const page = yield* listPets({ limit: Limit.make(20), status: "available" })
  const found = yield* getPet(pet.id)
  return { created: pet, listed: page.pets, found }
})

// The memory adapter keeps pets in this process; any other adapter's layer goes here instead.
const result = await Effect.runPromise(Effect.provide(program, MemoryPetRepository.layer))
console.log(JSON.stringify(result))
