import { Schema } from "effect"
import { IntFromString } from "./IntegerText.js"

export const maxLimit = 100

/**
 * How many pets one page may hold: 1 to 100. Branded, so only a checked value reaches a
 * repository (a negative SQL `LIMIT`, say, would mean "no limit").
 */
export const Limit = Schema.Int.pipe(
  Schema.between(1, maxLimit),
  Schema.brand("Limit"),
  Schema.annotations({
    identifier: "Limit",
    description: "Maximum number of animals returned.",
    message: () => `must be an integer from 1 to ${maxLimit}`,
  }),
)
export type Limit = typeof Limit.Type

export const defaultLimit: Limit = Limit.make(20)

/** `limit` as written in a query string. */
export const LimitFromString = Schema.compose(IntFromString, Limit).annotations({
  message: () => ({ message: `must be an integer from 1 to ${maxLimit}`, override: true }),
})
