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

const loneSurrogate = /\p{Surrogate}/u
const anySurrogate = /[\uD800-\uDFFF]/

/**
 * 1 to 255 Unicode characters (code points, as JSON Schema counts them). U+0000 and unpaired
 * surrogates are refused: no store keeps them faithfully (PostgreSQL refuses U+0000, UTF-8
 * cannot encode a lone surrogate), and a name must read back exactly as it was written.
 */
const isPetName = (name: string): boolean => {
  if (name.length === 0 || name.includes("\u0000")) return false
  // Without surrogates every UTF-16 unit is one code point: no need to count them.
  if (!anySurrogate.test(name)) return name.length <= 255
  return [...name].length <= 255 && !loneSurrogate.test(name)
}

/**
 * The same rule as a JSON Schema pattern: no U+0000, and a surrogate only as the first half of a
 * pair followed by its second half. It reads the same with and without the `u` flag: with it a
 * pair is one code point outside the excluded ranges, without it the second branch takes it.
 */
const petNamePattern = "^(?:[^\\u0000\\uD800-\\uDFFF]|[\\uD800-\\uDBFF][\\uDC00-\\uDFFF])*$"

export const PetName = Schema.String.pipe(
  Schema.filter(isPetName, {
    jsonSchema: { minLength: 1, maxLength: 255, pattern: petNamePattern },
  }),
  Schema.annotations({
    identifier: "PetName",
    description:
      "The animal's name: 1 to 255 Unicode characters, without U+0000 or an unpaired surrogate.",
    message: () => ({
      message: "must be a string of 1 to 255 Unicode characters, without U+0000",
      override: true,
    }),
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
