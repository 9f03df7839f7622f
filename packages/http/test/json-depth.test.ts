import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { nestsDeeperThan } from "../src/body/json-body.js"

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`

describe("nestsDeeperThan", () => {
  it("counts arrays and objects outside strings, escapes included", () => {
    assert.equal(nestsDeeperThan(nested(3), 3), false)
    assert.equal(nestsDeeperThan(nested(4), 3), true)
    assert.equal(nestsDeeperThan('[{"a":[1]}]', 3), false)
    assert.equal(nestsDeeperThan('[{"a":[{}]}]', 3), true)
    assert.equal(nestsDeeperThan('["\\"[[[[", "]]]"]', 1), false)
    assert.equal(nestsDeeperThan('["\\\\", [[]]]', 2), true)
    assert.equal(nestsDeeperThan("[][][][]", 1), false)
  })
})
