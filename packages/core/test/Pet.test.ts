import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either, Schema } from "effect"
import { CategoryId, NewPet, PetId, PetName, PetStatus } from "../src/index.js"

const accepts = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(value))

describe("PetId", () => {
  it("accepts positive safe integers", () => {
    assert.ok(accepts(PetId, 1))
    assert.ok(accepts(PetId, Number.MAX_SAFE_INTEGER))
  })

  it("refuses zero, negatives, fractions and integers JSON cannot carry exactly", () => {
    for (const value of [0, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Infinity, NaN, "1"]) {
      assert.equal(accepts(PetId, value), false, String(value))
    }
  })
})

describe("CategoryId", () => {
  it("accepts any integer within ±(2^53 − 1)", () => {
    for (const value of [0, -7, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      assert.ok(accepts(CategoryId, value), String(value))
    }
  })

  it("refuses integers beyond ±(2^53 − 1) rather than rounding them", () => {
    for (const value of [2 ** 53, -(2 ** 53), 1e300, 0.5]) {
      assert.equal(accepts(CategoryId, value), false, String(value))
    }
  })
})

describe("PetStatus", () => {
  it("is exactly available, pending, sold", () => {
    for (const value of ["available", "pending", "sold"]) assert.ok(accepts(PetStatus, value))
    for (const value of ["Available", "", "lost", 1]) assert.equal(accepts(PetStatus, value), false)
  })
})

describe("NewPet", () => {
  it("requires name and categoryId, status optional", () => {
    assert.ok(accepts(NewPet, { name: "Rex", categoryId: 1 }))
    assert.ok(accepts(NewPet, { name: "Rex", categoryId: 1, status: "sold" }))
    assert.equal(accepts(NewPet, { categoryId: 1 }), false)
    assert.equal(accepts(NewPet, { name: "Rex" }), false)
  })

  it("refuses an empty name, a wrongly typed field and an unknown status", () => {
    assert.equal(accepts(NewPet, { name: "", categoryId: 1 }), false)
    assert.equal(accepts(NewPet, { name: 5, categoryId: 1 }), false)
    assert.equal(accepts(NewPet, { name: "Rex", categoryId: "1" }), false)
    assert.equal(accepts(NewPet, { name: "Rex", categoryId: 1, status: "lost" }), false)
  })

  it("drops properties it does not define", () => {
    const decoded = Schema.decodeUnknownSync(NewPet)({ name: "Rex", categoryId: 1, id: 9, x: 1 })
    assert.deepEqual(Object.keys(decoded).sort(), ["categoryId", "name"])
  })
})

describe("PetName", () => {
  it("counts Unicode characters, not UTF-16 code units", () => {
    assert.ok(accepts(PetName, "🐕".repeat(255)))
    assert.equal(accepts(PetName, "🐕".repeat(256)), false)
    assert.ok(accepts(PetName, "x".repeat(255)))
    assert.equal(accepts(PetName, "x".repeat(256)), false)
  })

  it("refuses U+0000 and unpaired surrogates, which no store keeps faithfully", () => {
    assert.equal(accepts(PetName, "Rex\u0000"), false)
    assert.equal(accepts(PetName, "Rex\ud800"), false)
    assert.equal(accepts(PetName, "\udc00Rex"), false)
    assert.ok(accepts(PetName, "Rex \u00e9\t\n"))
  })
})
