import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { postJson } from "@petstore/test-support/requests"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { apiKey, readPet, readPets, startServer, type TestServer } from "../harness/server.js"

const post = (server: TestServer, body: string, contentType = "application/json") =>
  server.api("/pets", { method: "POST", body, headers: { "Content-Type": contentType } })

describe("POST /pets (createPet)", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("rule 2: answers 201 with the fields sent plus id, and a Location", async () => {
    const response = await server.api(
      "/pets",
      postJson({ name: "Rex", categoryId: 3, status: "available" }),
    )
    assert.equal(response.status, 201)
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
    const pet = await readPet(response)
    assert.deepEqual({ ...pet, id: 0 }, { id: 0, name: "Rex", categoryId: 3, status: "available" })
    assert.ok(Number.isSafeInteger(pet.id) && pet.id > 0)
    assert.equal(response.headers.get("location"), `/v1/pets/${pet.id}`)
    const fetched = await readPet(await server.api(`/pets/${pet.id}`))
    assert.deepEqual(fetched, pet)
  })

  it("status is optional, and absent from the pet when not sent", async () => {
    const response = await server.api("/pets", postJson({ name: "Tom", categoryId: 1 }))
    assert.equal(response.status, 201)
    const pet = await readPet(response)
    assert.equal("status" in pet, false)
  })

  it("assigns a different id to every pet", async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        server.api("/pets", postJson({ name: `pet ${i}`, categoryId: i })),
      ),
    )
    const ids = await Promise.all(responses.map(async (response) => (await readPet(response)).id))
    assert.equal(new Set(ids).size, 50)
  })

  it("rule 1: refuses a missing name or categoryId with 400 naming the field", async () => {
    const cases: ReadonlyArray<[unknown, RegExp]> = [
      [{ categoryId: 1 }, /name/],
      [{ name: "Rex" }, /categoryId/],
      [{}, /name.*categoryId/],
    ]
    for (const [body, field] of cases) {
      const message = await assertError(
        await server.api("/pets", postJson(body)),
        400,
        "invalid_body",
      )
      assert.match(message, field)
    }
  })

  it("refuses wrongly typed fields and an unknown status with 400 naming the field", async () => {
    const cases: ReadonlyArray<[unknown, RegExp]> = [
      [{ name: 5, categoryId: 1 }, /^name /],
      [{ name: null, categoryId: 1 }, /^name /],
      [{ name: "", categoryId: 1 }, /^name /],
      [{ name: "x".repeat(256), categoryId: 1 }, /^name /],
      [{ name: "Rex", categoryId: "1" }, /^categoryId /],
      [{ name: "Rex", categoryId: 1.5 }, /^categoryId /],
      [{ name: "Rex", categoryId: null }, /^categoryId /],
      [{ name: "Rex", categoryId: 1, status: "lost" }, /^status /],
      [{ name: "Rex", categoryId: 1, status: null }, /^status /],
    ]
    for (const [body, field] of cases) {
      const message = await assertError(
        await server.api("/pets", postJson(body)),
        400,
        "invalid_body",
      )
      assert.match(message, field, JSON.stringify(body))
    }
  })

  it("refuses integers beyond ±(2^53 − 1) instead of rounding them", async () => {
    for (const categoryId of [
      "9007199254740992",
      "9007199254740993",
      "-9007199254740993",
      "1e400",
    ]) {
      const message = await assertError(
        await post(server, `{"name":"Big","categoryId":${categoryId}}`),
        400,
        "invalid_body",
      )
      assert.match(message, /categoryId/)
    }
    const edge = await post(server, `{"name":"Edge","categoryId":-9007199254740991}`)
    assert.equal(edge.status, 201)
    assert.equal((await readPet(edge)).categoryId, -9007199254740991)
  })

  it("refuses invalid JSON with 400 invalid_json", async () => {
    for (const body of ["{", "{'name':'Rex'}", '{"name":"Rex",}', "undefined", "{} {}"]) {
      await assertError(await post(server, body), 400, "invalid_json")
    }
  })

  it("refuses an empty body and a body that is not an object with 400", async () => {
    await assertError(await post(server, ""), 400, "invalid_body")
    await assertError(await post(server, "   "), 400, "invalid_body")
    await assertError(await server.api("/pets", { method: "POST" }), 400, "invalid_body")
    for (const body of ["[]", '"Rex"', "42", "null", "true", '[{"name":"Rex","categoryId":1}]']) {
      const message = await assertError(await post(server, body), 400, "invalid_body")
      assert.match(message, /object/)
    }
  })

  it("never stores or echoes unknown properties, and ignores a sent id", async () => {
    const response = await server.api(
      "/pets",
      postJson({ name: "Rex", categoryId: 1, id: 999999, owner: "me", nested: { a: 1 } }),
    )
    assert.equal(response.status, 201)
    const pet = await readPet(response)
    assert.notEqual(pet.id, 999999)
    const listed = await readPets(await server.api("/pets?limit=100"))
    assert.ok(listed.some((stored) => stored.id === pet.id))
  })

  it("__proto__ and constructor keys pollute nothing", async () => {
    const body =
      '{"name":"Proto","categoryId":1,"__proto__":{"polluted":true,"status":"sold"},"constructor":{"prototype":{"polluted":true}}}'
    const response = await post(server, body)
    assert.equal(response.status, 201)
    const pet = await readPet(response)
    assert.equal("status" in pet, false)
    assert.equal(Reflect.get({}, "polluted"), undefined)
    assert.equal(Reflect.get(Object.prototype, "polluted"), undefined)
  })

  it("refuses a body that is not JSON with 415", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/xml"]) {
      await assertError(
        await post(server, '{"name":"Rex","categoryId":1}', type),
        415,
        "unsupported_media_type",
      )
    }
    const noType = await rawRequest(
      server.origin,
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    )
    assert.match(noType, /^HTTP\/1\.1 415 /)
  })

  it("accepts a JSON media type with parameters or a +json suffix, refuses another charset", async () => {
    const body = '{"name":"Rex","categoryId":1}'
    assert.equal((await post(server, body, "application/json; charset=utf-8")).status, 201)
    assert.equal((await post(server, body, "Application/JSON")).status, 201)
    assert.equal((await post(server, body, "application/merge-patch+json")).status, 201)
    await assertError(
      await post(server, body, "application/json; charset=latin1"),
      415,
      "unsupported_media_type",
    )
  })

  it("refuses a content-encoded body with 415", async () => {
    const response = await server.api("/pets", {
      method: "POST",
      body: '{"name":"Rex","categoryId":1}',
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
    })
    await assertError(response, 415, "unsupported_media_type")
  })

  it("refuses a body over 1 MiB with 413, announced or streamed", async () => {
    const big = JSON.stringify({ name: "Rex", categoryId: 1, padding: "x".repeat(1024 * 1024) })
    await assertError(await post(server, big), 413, "payload_too_large")
    const chunked = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      },
    })
    const streamed = await server.api("/pets", {
      method: "POST",
      body: chunked,
      headers: { "Content-Type": "application/json" },
      duplex: "half",
    })
    await assertError(streamed, 413, "payload_too_large")
  })

  it("accepts a body of almost 1 MiB", async () => {
    const padding = "x".repeat(1024 * 1024 - 100)
    const response = await post(server, JSON.stringify({ name: "Rex", categoryId: 1, padding }))
    assert.equal(response.status, 201)
  })
})
