import { IntegerText, Pet, PetStatus } from "@petstore/core"
import { ParseResult, Schema } from "effect"

const maxSafe = BigInt(Number.MAX_SAFE_INTEGER)
const isIntegerText = Schema.is(IntegerText)

/**
 * An int64 column's value as the number it holds exactly: from a bigint (SQLite with safe
 * integers), decimal text (PostgreSQL's int8) or a number; `undefined` for anything else, or for
 * an integer beyond ±(2^53 − 1), which a number would round.
 */
export const exactNumber = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isSafeInteger(value) ? value : undefined
  if (typeof value === "string" && !isIntegerText(value)) return undefined
  if (typeof value !== "string" && typeof value !== "bigint") return undefined
  const integer = BigInt(value)
  return integer >= -maxSafe && integer <= maxSafe ? Number(integer) : undefined
}

/** An int64 column as a driver returns it, decoded by `exactNumber`: refused rather than rounded. */
export const SafeIntegerFromColumn = Schema.transformOrFail(
  Schema.Union(Schema.BigIntFromSelf, Schema.String, Schema.Number),
  Schema.Number,
  {
    strict: true,
    decode: (value, _, ast) => {
      const exact = exactNumber(value)
      return exact === undefined
        ? ParseResult.fail(
            new ParseResult.Type(ast, value, "is not an integer a JSON number carries exactly"),
          )
        : ParseResult.succeed(exact)
    },
    encode: (value) => ParseResult.succeed(value),
  },
)

/** A row of `pets` as the repository selects it (`category_id AS "categoryId"`). */
export const PetRow = Schema.Struct({
  id: SafeIntegerFromColumn,
  name: Schema.String,
  categoryId: SafeIntegerFromColumn,
  status: Schema.optionalWith(PetStatus, { exact: true, nullable: true }),
})

/** Decodes a selected row into the core `Pet`, checking every field. */
export const PetFromRow = Schema.compose(PetRow, Pet)
