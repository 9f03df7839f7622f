import { Schema } from "effect"
import { PageCursor } from "./PageCursor.js"
import { PetStatus } from "./Pet.js"

export const defaultLimit = 20
export const maxLimit = 100

/** How many pets one page may hold: 1 to 100. */
export const Limit = Schema.Int.pipe(
  Schema.between(1, maxLimit),
  Schema.annotations({
    identifier: "Limit",
    description: "Maximum number of animals returned.",
    message: () => `must be an integer from 1 to ${maxLimit}`,
  }),
)

const integerText = /^-?[0-9]+$/

/** A decimal integer written in a path or a query string ("12"; not "1.5", "1e3" or " 12"). */
export const IntFromString = Schema.String.pipe(
  Schema.filter((text) => integerText.test(text), { message: () => "must be an integer" }),
  Schema.compose(Schema.NumberFromString),
)

/** `limit` as written in a query string. */
export const LimitFromString = Schema.compose(IntFromString, Limit).annotations({
  message: () => ({ message: `must be an integer from 1 to ${maxLimit}`, override: true }),
})

/**
 * The listPets query as a query string carries it: every value a string, `limit` defaulting
 * to 20. Decodes to what `listPets` takes.
 */
export const ListPetsQuery = Schema.Struct({
  limit: Schema.optionalWith(LimitFromString, { default: () => defaultLimit, exact: true }),
  status: Schema.optionalWith(PetStatus, { exact: true }),
  cursor: Schema.optionalWith(PageCursor, { exact: true }),
})
export type ListPetsQuery = typeof ListPetsQuery.Type
