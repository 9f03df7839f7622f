import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Pet } from "@petstore/core"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import { petJson, petsJson } from "../src/operations/pet-json.js"

const pets = Arbitrary.make(Pet)
const encodePet = Schema.encodeSync(Pet)

describe("the JSON written for pets", () => {
  it("is exactly what encoding through the Pet schema writes, for every pet shape", () => {
    fc.assert(
      fc.property(pets, (pet) => {
        const expected = JSON.stringify(encodePet(pet))
        assert.equal(petJson(pet), expected)
        assert.equal(petJson(pet), expected, "the kept text")
      }),
      { numRuns: 2000 },
    )
  })

  it("a page is the JSON array of its pets, as encoding the array writes it", () => {
    const encodePets = Schema.encodeSync(Schema.Array(Pet))
    fc.assert(
      fc.property(fc.array(pets, { maxLength: 20 }), (page) => {
        assert.equal(petsJson(page), JSON.stringify(encodePets(page)))
      }),
      { numRuns: 300 },
    )
  })
})
