import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { apiKey, readPet, readPets, startServer, type TestServer } from "../harness/server.js"

const create = (
  send: (path: string, init: RequestInit) => Promise<Response>,
  body: string,
  key?: string,
  authorization?: string,
) =>
  send("/pets", {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      ...(key === undefined ? {} : { "Idempotency-Key": key }),
      ...(authorization === undefined ? {} : { Authorization: authorization }),
    },
  })

const rex = JSON.stringify({ name: "Rex", categoryId: 1, status: "available" })

let keys = 0
const freshKey = () => `key-${process.pid}-${++keys}-${Math.random().toString(36).slice(2)}`

describe("Idempotency-Key on POST /pets", () => {
  let server: TestServer
  const otherKey = "second-api-key-456"
  before(async () => {
    server = await startServer({ apiKeys: [apiKey, otherKey] })
  })
  after(() => server.close())

  const api = (path: string, init: RequestInit) => server.api(path, init)
  const countNamed = async (name: string) =>
    (await readPets(await server.api("/pets?limit=100"))).filter((pet) => pet.name === name).length

  it("without the header nothing changes: two identical POSTs make two pets", async () => {
    const body = JSON.stringify({ name: "Twice", categoryId: 1 })
    const first = await readPet(await create(api, body))
    const second = await readPet(await create(api, body))
    assert.notEqual(first.id, second.id)
    assert.equal(await countNamed("Twice"), 2)
  })

  it("a retry with the same key and pet answers what the first did, with Idempotent-Replayed", async () => {
    const key = freshKey()
    const first = await create(api, JSON.stringify({ name: "Once", categoryId: 3 }), key)
    assert.equal(first.status, 201)
    assert.equal(first.headers.get("idempotent-replayed"), null)
    const firstBody = await first.text()

    // Another order, other spacing, an unknown property: the same pet once decoded.
    const retry = await create(api, ' { "x": 1, "categoryId" : 3,  "name":"Once" } ', key)
    assert.equal(retry.status, 201)
    assert.equal(retry.headers.get("idempotent-replayed"), "true")
    assert.equal(retry.headers.get("location"), first.headers.get("location"))
    assert.equal(await retry.text(), firstBody)
    assert.equal(await countNamed("Once"), 1)
  })

  it("the quotes are not part of the key: a quoted and an unquoted key are one key", async () => {
    const key = freshKey()
    const body = JSON.stringify({ name: "Quoted", categoryId: 4 })
    const first = await readPet(await create(api, body, `"${key}"`))
    const retry = await create(api, body, key)
    assert.equal(retry.headers.get("idempotent-replayed"), "true")
    assert.deepEqual(await readPet(retry), first)
  })

  it("the same key with a different pet is 422 idempotency_key_reused, and stores nothing", async () => {
    const key = freshKey()
    assert.equal(
      (await create(api, JSON.stringify({ name: "First", categoryId: 5 }), key)).status,
      201,
    )
    for (const other of [
      { name: "Second", categoryId: 5 },
      { name: "First", categoryId: 6 },
      { name: "First", categoryId: 5, status: "sold" },
    ]) {
      await assertError(
        await create(api, JSON.stringify(other), key),
        422,
        "idempotency_key_reused",
      )
    }
    assert.equal(await countNamed("Second"), 0)
  })

  it("a missing status differs from any status", async () => {
    const key = freshKey()
    const withStatus = JSON.stringify({ name: "Status", categoryId: 7, status: "pending" })
    assert.equal((await create(api, withStatus, key)).status, 201)
    await assertError(
      await create(api, JSON.stringify({ name: "Status", categoryId: 7 }), key),
      422,
      "idempotency_key_reused",
    )
  })

  it("the same key under another API key is another key", async () => {
    const key = freshKey()
    const body = JSON.stringify({ name: "Scoped", categoryId: 8 })
    const mine = await readPet(await create(api, body, key))
    const theirs = await create(api, body, key, `Bearer ${otherKey}`)
    assert.equal(theirs.status, 201)
    assert.equal(theirs.headers.get("idempotent-replayed"), null)
    assert.notEqual((await readPet(theirs)).id, mine.id)
  })

  it("refuses a malformed key with 400 invalid_idempotency_key, before storing anything", async () => {
    for (const key of ["", '""', "x".repeat(256), '"x'.padEnd(258, "x"), 'a"b', "a\\b", "a b"]) {
      await assertError(await create(api, rex, key), 400, "invalid_idempotency_key")
    }
    const edge = await create(api, JSON.stringify({ name: "Edge", categoryId: 9 }), "~".repeat(255))
    assert.equal(edge.status, 201)
  })

  it("refuses control characters, non-ASCII and two of the header, sent as raw bytes", async () => {
    const body = '{"name":"Raw","categoryId":1}'
    const send = (headers: string) =>
      rawRequest(
        server.origin,
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${headers}Connection: close\r\n\r\n${body}`,
      )
    for (const headers of [
      "Idempotency-Key: a\tb\r\n",
      "Idempotency-Key: caf\u00e9\r\n",
      "Idempotency-Key: one\r\nIdempotency-Key: one\r\n",
      "Idempotency-Key: one\r\nidempotency-key: two\r\n",
    ]) {
      const answer = await send(headers)
      assert.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(headers))
      assert.match(answer, /"code":"invalid_idempotency_key"/)
    }
    assert.equal(await countNamed("Raw"), 0)
  })

  it("the key is checked after authentication: without a valid key it is 401", async () => {
    await assertError(await create(api, rex, "", "Bearer nope"), 401, "unauthorized")
  })

  it("only successful creates are remembered: after a 400 the same key creates", async () => {
    const key = freshKey()
    await assertError(await create(api, '{"name":"Bad"}', key), 400, "invalid_body")
    await assertError(await create(api, "{", key), 400, "invalid_json")
    const created = await create(api, JSON.stringify({ name: "After400", categoryId: 1 }), key)
    assert.equal(created.status, 201)
    assert.equal(created.headers.get("idempotent-replayed"), null)
  })

  it("20 simultaneous POSTs with one key make one pet; each answer is 201 with it, or 409", async () => {
    const key = freshKey()
    const body = JSON.stringify({ name: "Stampede", categoryId: 10 })
    const answers = await Promise.all(Array.from({ length: 20 }, () => create(api, body, key)))
    const created = new Set<number>()
    for (const answer of answers) {
      if (answer.status === 409) {
        await assertError(answer, 409, "idempotency_key_in_use")
        assert.equal(answer.headers.get("retry-after"), "1")
      } else {
        assert.equal(answer.status, 201)
        created.add((await readPet(answer)).id)
      }
    }
    assert.equal(created.size, 1)
    assert.equal(await countNamed("Stampede"), 1)
    const retry = await create(api, body, key)
    assert.equal(retry.headers.get("idempotent-replayed"), "true")
    assert.ok(created.has((await readPet(retry)).id))
  })
})
