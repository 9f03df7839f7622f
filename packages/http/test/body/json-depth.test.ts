import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import { nestsDeeperThan } from "../../src/body/json-body.js"
import { maxJsonDepth } from "../../src/index.js"
import { startLimitedServer, type LimitedServer } from "../harness/limited-server.js"

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

const post = (server: LimitedServer, body: string) =>
  server.withKey("/pets", { method: "POST", headers: { "Content-Type": "application/json" }, body })

describe("JSON nesting depth of request bodies", () => {
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer()
  })
  after(() => server.close())

  it(`refuses a body nested more than ${maxJsonDepth} deep with 400 invalid_json naming the problem`, async () => {
    const body = `{"name": "Rex", "categoryId": 1, "tags": ${nested(maxJsonDepth)}}`
    const message = assertErrorAnswer(await post(server, body), 400, "invalid_json")
    assert.match(message, new RegExp(`more than ${maxJsonDepth} deep`))
  })

  it(`accepts ${maxJsonDepth} levels (a property the spec does not define is ignored)`, async () => {
    const body = `{"name": "Rex", "categoryId": 1, "tags": ${nested(maxJsonDepth - 1)}}`
    const answer = await post(server, body)
    assert.equal(answer.status, 201, answer.body)
  })

  it("answers nearly a megabyte of nesting at once and stays healthy", async () => {
    const started = performance.now()
    // Valid JSON, 400,000 deep: what would walk it recursively (a schema, a stringify) is spared it.
    const deep = `{"name": "Rex", "categoryId": 1, "tags": ${nested(400_000)}}`
    assertErrorAnswer(await post(server, deep), 400, "invalid_json")
    assertErrorAnswer(await post(server, "[".repeat(1_000_000)), 400, "invalid_json")
    assert.ok(performance.now() - started < 5_000)
    assert.equal((await server.withKey("/pets")).status, 200)
  })

  it("does not count brackets inside strings", async () => {
    const name = `[{"${"[".repeat(100)}\\"[[`
    const answer = await post(server, JSON.stringify({ name, categoryId: 1 }))
    assert.equal(answer.status, 201, answer.body)
  })
})
