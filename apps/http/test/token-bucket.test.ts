import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { tokenBuckets } from "../src/token-bucket.js"
import { manualClock } from "./limits-harness.js"

describe("tokenBuckets", () => {
  it("starts full: with 5/s the first 5 pass at once and the 6th is refused", () => {
    const clock = manualClock()
    const buckets = tokenBuckets({ capacity: 5, windowSeconds: 1 }, { clock: clock.now })
    const decisions = Array.from({ length: 6 }, () => buckets.take("key"))
    assert.deepEqual(
      decisions.map((decision) => [decision.allowed, decision.remaining]),
      [
        [true, 4],
        [true, 3],
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    )
  })

  it("refills evenly over the window, never beyond the capacity", () => {
    const clock = manualClock()
    const buckets = tokenBuckets({ capacity: 5, windowSeconds: 1 }, { clock: clock.now })
    for (let i = 0; i < 5; i++) buckets.take("key")
    clock.advance(199)
    assert.equal(buckets.take("key").allowed, false)
    clock.advance(1)
    assert.deepEqual(buckets.take("key"), { allowed: true, remaining: 0, secondsToNextToken: 1 })
    assert.equal(buckets.take("key").allowed, false)
    clock.advance(60_000)
    assert.equal(buckets.take("key").remaining, 4)
  })

  it("says how many whole seconds until the next token, at least 1", () => {
    const clock = manualClock()
    const buckets = tokenBuckets({ capacity: 20, windowSeconds: 60 }, { clock: clock.now })
    for (let i = 0; i < 20; i++) buckets.take("key")
    assert.deepEqual(buckets.take("key"), { allowed: false, remaining: 0, secondsToNextToken: 3 })
    clock.advance(2_500)
    assert.equal(buckets.peek("key").secondsToNextToken, 1)
    const fast = tokenBuckets({ capacity: 1000, windowSeconds: 1 }, { clock: clock.now })
    assert.equal(fast.take("key").secondsToNextToken, 1)
  })

  it("keeps buckets apart: one key's exhaustion leaves another's full", () => {
    const clock = manualClock()
    const buckets = tokenBuckets({ capacity: 2, windowSeconds: 1 }, { clock: clock.now })
    for (let i = 0; i < 5; i++) buckets.take("spent")
    assert.deepEqual(buckets.take("fresh"), { allowed: true, remaining: 1, secondsToNextToken: 1 })
  })

  it("peek spends nothing and keeps no bucket for a key it has not seen", () => {
    const clock = manualClock()
    const buckets = tokenBuckets({ capacity: 1, windowSeconds: 1 }, { clock: clock.now })
    for (let i = 0; i < 3; i++) assert.equal(buckets.peek(`key ${i}`).allowed, true)
    assert.equal(buckets.size(), 0)
    buckets.take("key")
    assert.equal(buckets.peek("key").allowed, false)
  })

  it("stays within maxBuckets however many keys come, dropping full buckets before busy ones", () => {
    const clock = manualClock()
    const buckets = tokenBuckets(
      { capacity: 2, windowSeconds: 1 },
      { clock: clock.now, maxBuckets: 100 },
    )
    for (let i = 0; i < 10_000; i++) {
      if (i % 50 === 0) {
        // Every passer-by so far is full again; the busy key spends a token, so it is not.
        clock.advance(1_000)
        buckets.take("busy")
      }
      buckets.take(`passer-by ${i}`)
      assert.ok(buckets.size() <= 100)
    }
    // Had its bucket been dropped, a new one would start full and leave 1.
    assert.equal(buckets.take("busy").remaining, 0, "the busy key's bucket was dropped")
  })
})
