import { Schema } from "effect"

const integerText = /^-?[0-9]+$/

/**
 * A decimal integer as text: an optional minus sign and digits only ("12", "-3"; not "1.5",
 * "1e3", "0x10" or " 12").
 */
export const IntegerText = Schema.String.pipe(
  Schema.filter((text) => integerText.test(text), { message: () => "must be an integer" }),
)

/** A decimal integer written in a path or a query string. */
export const IntFromString = Schema.compose(IntegerText, Schema.NumberFromString)
