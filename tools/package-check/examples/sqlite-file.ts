import { CategoryId, createPet, getPet, NewPet } from "@petstore/core"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { Effect } from "effect"

// Each Effect.provide opens the file (creating it and its folder if missing) and closes it
// when its effect ends.
const store = SqlitePetRepository.layer({ filename: process.argv[2] ?? "data/pets.db" })

const { pet } = await Effect.runPromise(
  createPet(NewPet.make({ name: "Rex", categoryId: CategoryId.make(1) })).pipe(
    Effect.provide(store),
  ),
)
const reread = await Effect.runPromise(getPet(pet.id).pipe(Effect.provide(store)))
console.log(JSON.stringify({ created: pet, reread }))
