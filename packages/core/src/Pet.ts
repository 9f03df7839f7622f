import { Schema } from "effect"

/**
 * The identifier the store assigns to a pet: a positive int64 that JSON can carry exactly,
 * so at most 2^53 − 1 (`Schema.Int` refuses unsafe integers).
 */
export const PetId = Schema.Int.pipe(
  Schema.positive(),
  Schema.brand("PetId"),
  Schema.annotations({
    identifier: "PetId",
    description: "Identifier assigned by the service on creation.",
    message: () => ({
      message: "must be a positive integer no greater than 9007199254740991",
      override: true,
    }),
  }),
)
export type PetId = typeof PetId.Type

/** The category a pet belongs to. Any int64 that JSON carries exactly: ±(2^53 − 1). */
export const CategoryId = Schema.Int.pipe(
  Schema.brand("CategoryId"),
  Schema.annotations({
    identifier: "CategoryId",
    description: "Identifier of the category the animal belongs to.",
    message: () => ({
      message: "must be an integer between -9007199254740991 and 9007199254740991",
      override: true,
    }),
  }),
)
export type CategoryId = typeof CategoryId.Type

export const PetName = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(255),
  Schema.annotations({
    identifier: "PetName",
    description: "The animal's name: 1 to 255 characters.",
    message: () => ({ message: "must be a string of 1 to 255 characters", override: true }),
  }),
)

export const PetStatus = Schema.Literal("available", "pending", "sold").annotations({
  identifier: "PetStatus",
  description: "Availability status.",
  message: () => ({ message: 'must be one of "available", "pending", "sold"', override: true }),
})
export type PetStatus = typeof PetStatus.Type

const petFields = {
  name: PetName,
  categoryId: CategoryId,
  status: Schema.optionalWith(PetStatus, { exact: true }),
}

/** What a client sends to add a pet; the service assigns `id`. */
export class NewPet extends Schema.Class<NewPet>("NewPet")(petFields) {}

/** A pet as the store keeps it. */
export class Pet extends Schema.Class<Pet>("Pet")({ id: PetId, ...petFields }) {}
