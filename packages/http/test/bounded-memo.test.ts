import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { boundedMemo } from "../src/operations/bounded-memo.js"

describe("boundedMemo", () => {
  it("computes each key once", () => {
    const memo = boundedMemo<number>(10)
    let computed = 0
    const compute = () => ++computed
    assert.equal(memo.get("a", compute), 1)
    assert.equal(memo.get("a", compute), 1)
    assert.equal(memo.get("b", compute), 2)
    assert.equal(computed, 2)
  })

  it("never keeps more than its capacity, whatever keys it is given", () => {
    const memo = boundedMemo<number>(100)
    for (let i = 0; i < 10_000; i++) {
      memo.get(`key ${i}`, () => i)
      assert.ok(memo.size() <= 100, `${memo.size()} values after ${i + 1} keys`)
    }
  })

  it("does not keep keys longer than its bound, but still answers them", () => {
    const memo = boundedMemo<string>(10, 8)
    assert.equal(
      memo.get("x".repeat(9), () => "long"),
      "long",
    )
    assert.equal(memo.size(), 0)
    memo.get("x".repeat(8), () => "short")
    assert.equal(memo.size(), 1)
  })
})
