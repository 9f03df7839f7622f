import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { decisionOf, spend, tokenInterval } from "../../src/limits/rate.js"

const fivePerMinute = { capacity: 5, windowSeconds: 60 }
const windowMs = fivePerMinute.windowSeconds * 1000
const now = 1_000_000

describe("spend (GCRA) reads a bucket's time as the Redis script does", () => {
  it("takes a time past the window as the window's end: empty, refilling, Retry-After within it", () => {
    for (const fullAt of [1e300, Infinity, now + 100 * windowMs]) {
      const spent = spend(fivePerMinute, fullAt, now, 1)
      assert.deepEqual(spent, { allowed: false, tokens: 0, fullAt: now + windowMs }, String(fullAt))
      assert.deepEqual(decisionOf(fivePerMinute, spent.allowed, spent.tokens), {
        allowed: false,
        remaining: 0,
        secondsToNextToken: 12,
      })
      const later = spend(fivePerMinute, spent.fullAt, now + tokenInterval(fivePerMinute), 1)
      assert.equal(later.allowed, true, "a token came back one interval later")
    }
  })

  it("takes NaN, a negative or a past time as a full bucket", () => {
    for (const fullAt of [NaN, -5, -Infinity, now - 1]) {
      assert.deepEqual(
        spend(fivePerMinute, fullAt, now, 1),
        { allowed: true, tokens: 4, fullAt: now + tokenInterval(fivePerMinute) },
        String(fullAt),
      )
    }
  })
})
