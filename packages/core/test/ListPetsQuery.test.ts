import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either, Schema } from "effect"
import { Limit, ListPetsQuery, maxCursorLength, PageCursor, PetId } from "../src/index.js"

const decode = Schema.decodeUnknownEither(ListPetsQuery)

describe("ListPetsQuery", () => {
  it("defaults limit to 20", () => {
    assert.deepEqual(decode({}), Either.right({ limit: 20 }))
  })

  it("accepts limits from 1 to 100", () => {
    assert.deepEqual(decode({ limit: "1" }), Either.right({ limit: 1 }))
    assert.deepEqual(decode({ limit: "100" }), Either.right({ limit: 100 }))
  })

  it("refuses any other limit", () => {
    for (const limit of ["0", "101", "-1", "abc", "1.5", "", " 5", "1e2", "0x10"]) {
      assert.ok(Either.isLeft(decode({ limit })), limit)
    }
  })

  it("accepts each status and refuses others", () => {
    assert.deepEqual(decode({ status: "sold" }), Either.right({ limit: 20, status: "sold" }))
    assert.ok(Either.isLeft(decode({ status: "SOLD" })))
    assert.ok(Either.isLeft(decode({ status: "" })))
  })
})

describe("Limit", () => {
  it("accepts the integers from 1 to 100", () => {
    for (const limit of [1, 20, 100]) {
      assert.deepEqual(Schema.decodeUnknownEither(Limit)(limit), Either.right(limit))
    }
  })

  it("refuses 0, negatives, more than 100 and fractions, so no repository ever sees them", () => {
    for (const limit of [0, -5, 101, 1.5]) {
      assert.ok(Either.isLeft(Schema.decodeUnknownEither(Limit)(limit)), String(limit))
      assert.throws(() => Limit.make(limit))
    }
  })

  it("is what ListPetsQuery decodes limit to", () => {
    const decoded = Schema.decodeUnknownSync(ListPetsQuery)({ limit: "7" })
    assert.ok(Schema.is(Limit)(decoded.limit))
  })
})

describe("PageCursor", () => {
  it("round-trips a pet id through an opaque token", () => {
    const token = Schema.encodeSync(PageCursor)(PetId.make(42))
    assert.doesNotMatch(token, /42/)
    assert.equal(Schema.decodeSync(PageCursor)(token), 42)
  })

  it("refuses a token longer than maxCursorLength, saying so", () => {
    const long = "A".repeat(maxCursorLength + 1)
    const decoded = Schema.decodeUnknownEither(PageCursor)(long)
    assert.ok(Either.isLeft(decoded))
    assert.match(String(decoded.left), /longer than 200 characters/)
    const atTheBound = Schema.encodeSync(PageCursor)(PetId.make(1)).padEnd(maxCursorLength, "A")
    assert.ok(Either.isLeft(Schema.decodeUnknownEither(PageCursor)(atTheBound)))
  })

  it("refuses tokens that do not decode to a pet id", () => {
    const forged = [
      "",
      "42",
      "not base64!",
      Buffer.from("after:0").toString("base64url"),
      Buffer.from("after:-1").toString("base64url"),
      Buffer.from("after:1.5").toString("base64url"),
      Buffer.from("after:99999999999999999").toString("base64url"),
      Buffer.from("before:4").toString("base64url"),
    ]
    for (const token of forged) {
      assert.ok(Either.isLeft(Schema.decodeUnknownEither(PageCursor)(token)), token)
    }
  })
})
