import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { bearerTokenPattern } from "../../src/vocabulary/headers.js"

describe("bearerTokenPattern", () => {
  it("accepts an RFC 6750 b64token: letters, digits, -._~+/ then trailing =", () => {
    for (const token of ["abc", "A-Z.0_9~+/", "dG9rZW4=", "x=="]) {
      assert.match(token, bearerTokenPattern)
    }
  })

  it("refuses anything else", () => {
    for (const token of ["", "has space", "a=b", "=", "semi;colon", "é", "a\nb"]) {
      assert.doesNotMatch(token, bearerTokenPattern)
    }
  })
})
