import type { Pet } from "@petstore/core"

const written = new WeakMap<Pet, string>()

/**
 * A pet as JSON, exactly as encoding it through the `Pet` schema and `JSON.stringify` writes it
 * (the same fields in the same order), without running the schema's checks again: a `Pet` was
 * checked when it was made, and it never changes, so its text is written once and kept.
 */
export const petJson = (pet: Pet): string => {
  const cached = written.get(pet)
  if (cached !== undefined) return cached
  const text = JSON.stringify(
    pet.status === undefined
      ? { id: pet.id, name: pet.name, categoryId: pet.categoryId }
      : { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status },
  )
  written.set(pet, text)
  return text
}

export const petsJson = (pets: ReadonlyArray<Pet>): string => `[${pets.map(petJson).join(",")}]`
