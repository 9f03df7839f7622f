import { Schema } from "effect"
import { defaultLimit, LimitFromString } from "./Limit.js"
import { PageCursor } from "./PageCursor.js"
import { PetStatus } from "./Pet.js"

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
