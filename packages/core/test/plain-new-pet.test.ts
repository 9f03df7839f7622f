import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { NewPet, plainNewPet } from "../src/index.js"

const decodeNewPet = Schema.decodeUnknownEither(NewPet, { onExcessProperty: "ignore" })

/** Names at and around every rule of PetName: lengths 0–256, U+0000, lone and paired surrogates. */
const names = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", minLength: 250, maxLength: 260 }),
  fc.string({ unit: "grapheme-ascii", minLength: 253, maxLength: 257 }),
  fc.string({ unit: fc.constantFrom("a", "\uD83D\uDC36"), minLength: 250, maxLength: 260 }),
  fc.string({ unit: fc.constantFrom("a", "\u0000", "\uD83D", "\uDC36", "\uD83D\uDC36", "é") }),
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.constant(""),
  fc.integer(),
  fc.constant(null),
)

const categoryIds = fc.oneof(
  fc.integer(),
  fc.constantFrom(
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
    2 ** 53,
    -(2 ** 53),
    -0,
    0.5,
    1e300,
    Number.NaN,
    Number.POSITIVE_INFINITY,
  ),
  fc.double(),
  fc.string({ maxLength: 3 }),
  fc.constant(null),
)

const statuses = fc.oneof(
  fc.constantFrom("available", "pending", "sold", "Sold", "", "lost"),
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
)

/** JSON-like objects, each property present or absent, sometimes with others beside them. */
const inputs = fc.record(
  {
    name: names,
    categoryId: categoryIds,
    status: statuses,
    extra: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
)

describe("plainNewPet", () => {
  it("gives exactly what decoding through NewPet gives, and nothing where decoding fails", () => {
    fc.assert(
      fc.property(inputs, (input) => {
        const plain = plainNewPet(input)
        const decoded = decodeNewPet(input)
        if (Either.isLeft(decoded)) return assert.equal(plain, undefined)
        assert.ok(plain instanceof NewPet, "a valid input is taken by the plain path")
        assert.deepStrictEqual({ ...plain }, { ...decoded.right })
        assert.deepStrictEqual(Object.keys(plain), Object.keys(decoded.right))
      }),
      { numRuns: 5_000 },
    )
  })

  it("refuses a status that is present but undefined, as the schema's exact optional does", () => {
    assert.equal(plainNewPet({ name: "Rex", categoryId: 1, status: undefined }), undefined)
    assert.ok(Either.isLeft(decodeNewPet({ name: "Rex", categoryId: 1, status: undefined })))
  })
})
