import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import type { RefusalScope } from "../../src/index.js"
import {
  manualClock,
  otherKey,
  startLimitedServer,
  type LimitedServer,
} from "../harness/limited-server.js"

const policy = '"per-key";q=5;w=1'

describe("per-key rate limit (PETSTORE_RATE_LIMIT=5/s)", () => {
  const clock = manualClock()
  const refusals: Array<RefusalScope> = []
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({
      limits: {
        perKey: { capacity: 5, windowSeconds: 1 },
        clock: clock.now,
        onRefusal: (scope) => refusals.push(scope),
      },
    })
  })
  after(() => server.close())
  // Each test starts with a full bucket for both keys.
  const refill = () => clock.advance(60_000)

  it("lets the first 5 rapid requests through, then answers 429 rate_limited with Retry-After", async () => {
    refill()
    for (let remaining = 4; remaining >= 0; remaining--) {
      const answer = await server.withKey("/pets")
      assert.equal(answer.status, 200)
      assert.equal(answer.headers["ratelimit-policy"], policy)
      assert.equal(answer.headers["ratelimit"], `"per-key";r=${remaining};t=1`)
    }
    const refused = await server.withKey("/pets")
    assertErrorAnswer(refused, 429, "rate_limited")
    assert.equal(refused.headers["retry-after"], "1")
    assert.equal(refused.headers["ratelimit-policy"], policy)
    assert.equal(refused.headers["ratelimit"], '"per-key";r=0;t=1')
    assert.equal(refused.headers["cache-control"], "no-store")
    assert.equal(refusals.at(-1), "key")
  })

  it("gives a token back every 1/5 s, evenly", async () => {
    refill()
    for (let i = 0; i < 5; i++) await server.withKey("/pets")
    assert.equal((await server.withKey("/pets")).status, 429)
    clock.advance(200)
    assert.equal((await server.withKey("/pets")).status, 200)
    assert.equal((await server.withKey("/pets")).status, 429)
    clock.advance(1_000)
    assert.equal((await server.withKey("/pets")).headers["ratelimit"], '"per-key";r=4;t=1')
  })

  it("counts each key on its own: one key's exhaustion never refuses another", async () => {
    refill()
    for (let i = 0; i < 8; i++) await server.withKey("/pets")
    assert.equal((await server.withKey("/pets")).status, 429)
    const other = await server.withKey("/pets", { key: otherKey })
    assert.equal(other.status, 200)
    assert.equal(other.headers["ratelimit"], '"per-key";r=4;t=1')
  })

  it("refuses creates too, before the body is read", async () => {
    refill()
    for (let i = 0; i < 5; i++) await server.withKey("/pets/1")
    // The body is not JSON: a 429 rather than a 400 shows it was never read.
    const refused = await server.withKey("/pets", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{not json",
    })
    assertErrorAnswer(refused, 429, "rate_limited")
  })

  it("puts RateLimit and RateLimit-Policy on every authenticated answer: 200, 201, 400, 404, 405", async () => {
    refill()
    const answers = [
      await server.withKey("/pets"),
      await server.withKey("/pets", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ name: "Rex", categoryId: 1 }),
      }),
      await server.withKey("/pets?limit=0"),
      await server.withKey("/nowhere"),
    ]
    refill()
    answers.push(
      await server.withKey("/pets/424242"),
      await server.withKey("/pets", { method: "DELETE" }),
    )
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 201, 400, 404, 404, 405],
    )
    for (const answer of answers) {
      assert.equal(answer.headers["ratelimit-policy"], policy, String(answer.status))
      assert.match(String(answer.headers["ratelimit"]), /^"per-key";r=[0-4];t=1$/)
      assert.equal(answer.headers["x-powered-by"], undefined)
    }
  })

  it("puts no RateLimit fields on unauthenticated or public answers, and does not count them", async () => {
    refill()
    const answers = [
      await server.send("/v1/pets"),
      await server.withKey("/pets", { key: "not-a-key" }),
      await server.send("/healthz"),
      await server.send("/v1/openapi.json"),
    ]
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [401, 401, 200, 200],
    )
    for (const answer of answers) {
      assert.equal(answer.headers["ratelimit"], undefined)
      assert.equal(answer.headers["ratelimit-policy"], undefined)
    }
    assert.equal((await server.withKey("/pets")).headers["ratelimit"], '"per-key";r=4;t=1')
  })
})

describe("per-key rate limit off (PETSTORE_RATE_LIMIT=off)", () => {
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({ limits: {} })
  })
  after(() => server.close())

  it("never refuses and sends no RateLimit fields", async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => server.withKey("/pets")))
    for (const answer of answers) {
      assert.equal(answer.status, 200)
      assert.equal(answer.headers["ratelimit"], undefined)
      assert.equal(answer.headers["ratelimit-policy"], undefined)
    }
  })
})

describe("per-key rate limit over a minute (20/min)", () => {
  const clock = manualClock()
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({
      limits: { perKey: { capacity: 20, windowSeconds: 60 }, clock: clock.now },
    })
  })
  after(() => server.close())

  it("asks for the seconds until the next token, and RateLimit's t agrees with Retry-After", async () => {
    for (let i = 0; i < 20; i++) await server.withKey("/pets")
    const refused = await server.withKey("/pets")
    assert.equal(refused.status, 429)
    assert.equal(refused.headers["retry-after"], "3")
    assert.equal(refused.headers["ratelimit-policy"], '"per-key";q=20;w=60')
    assert.equal(refused.headers["ratelimit"], '"per-key";r=0;t=3')
  })
})
