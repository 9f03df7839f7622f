import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError, readPet, startServer, type TestServer } from "./harness.js"

const categoryIdMessage =
  "categoryId must be an integer between -9007199254740991 and 9007199254740991"

const post = (server: TestServer, body: string, idempotencyKey?: string) =>
  server.api("/pets", {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      ...(idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey }),
    },
  })

describe("categoryId written with a fraction or an exponent, over HTTP", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("refuses the probe's values, which JSON.parse rounds to integers, with 400 naming categoryId", async () => {
    for (const literal of ["9007199254740990.6", "0.99999999999999999", "1e-400"]) {
      const message = await assertError(
        await post(server, `{"name":"Rex","categoryId":${literal}}`),
        400,
        "invalid_body",
      )
      assert.equal(message, categoryIdMessage, literal)
    }
  })

  it("refuses 1.0, 1e0 and -0.0: a fraction or an exponent is not an integer, whatever its value", async () => {
    for (const literal of ["1.0", "1e0", "-0.0", "1E+2", "10e-1"]) {
      const message = await assertError(
        await post(server, `{"name":"Rex","categoryId":${literal}}`),
        400,
        "invalid_body",
      )
      assert.equal(message, categoryIdMessage, literal)
    }
  })

  it("names every field at fault, as for any other invalid categoryId", async () => {
    const message = await assertError(await post(server, '{"categoryId":1.0}'), 400, "invalid_body")
    assert.equal(message, `name is missing; ${categoryIdMessage}`)
  })

  it("reads a key however it is escaped, and the last of a repeated one", async () => {
    await assertError(
      await post(server, '{"name":"Rex","category\\u0049d":2.0}'),
      400,
      "invalid_body",
    )
    await assertError(
      await post(server, '{"name":"Rex","categoryId":2,"categoryId":2.0}'),
      400,
      "invalid_body",
    )
    const last = await post(server, '{"name":"Rex","categoryId":2.0,"categoryId":2}')
    assert.equal(last.status, 201)
    assert.equal((await readPet(last)).categoryId, 2)
  })

  it("takes a name that reads like a number, and fractions elsewhere in the body", async () => {
    const response = await post(
      server,
      '{"name":"1.5e3","categoryId":7,"weight":1.0,"nested":{"categoryId":1.5},"list":[2e0]}',
    )
    assert.equal(response.status, 201)
    const pet = await readPet(response)
    assert.equal(pet.name, "1.5e3")
    assert.equal(pet.categoryId, 7)
  })

  it("a body with …990.6 under a key first used with …991 is refused, not a replay", async () => {
    const key = `fraction-${process.pid}-${Date.now()}`
    const first = await post(server, '{"name":"Big","categoryId":9007199254740991}', key)
    assert.equal(first.status, 201)
    const second = await post(server, '{"name":"Big","categoryId":9007199254740990.6}', key)
    assert.equal(second.headers.get("idempotent-replayed"), null)
    const message = await assertError(second, 400, "invalid_body")
    assert.equal(message, categoryIdMessage)
  })
})
