import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { postJson } from "@petstore/test-support/requests"
import { apiKey, readPets, startServer, type TestServer } from "../harness/server.js"

const challenge = 'Bearer realm="petstore"'
const invalidToken = 'Bearer realm="petstore", error="invalid_token"'

describe("authentication", () => {
  let server: TestServer
  before(async () => {
    server = await startServer({ apiKeys: [apiKey, "second-key"] })
  })
  after(() => server.close())

  const operations: ReadonlyArray<[string, string, RequestInit]> = [
    ["listPets", "/pets", {}],
    ["createPet", "/pets", postJson({ name: "Rex", categoryId: 1 })],
    ["getPet", "/pets/1", {}],
  ]

  for (const [operation, path, init] of operations) {
    it(`${operation} without a key is 401 with the Bearer challenge`, async () => {
      const response = await server.api(path, {
        ...init,
        headers: { ...init.headers, Authorization: "" },
      })
      await assertError(response, 401, "unauthorized")
      assert.equal(response.headers.get("www-authenticate"), challenge)
    })

    it(`${operation} with an unknown key is 401 with error="invalid_token"`, async () => {
      const response = await server.api(path, {
        ...init,
        headers: { ...init.headers, Authorization: "Bearer not-a-key" },
      })
      await assertError(response, 401, "unauthorized")
      assert.equal(response.headers.get("www-authenticate"), invalidToken)
    })
  }

  it("refuses a wrong Authorization form as a missing key", async () => {
    for (const header of [
      `Basic ${apiKey}`,
      apiKey,
      "Bearer",
      "Bearer ",
      `Bearer ${apiKey} extra`,
      `Bearer  "${apiKey}"`,
      `Token ${apiKey}`,
    ]) {
      const response = await server.api("/pets", { headers: { Authorization: header } })
      await assertError(response, 401, "unauthorized")
      assert.equal(response.headers.get("www-authenticate"), challenge, header)
    }
  })

  it("refuses a key that is a prefix, an extension or a different case of a real one", async () => {
    for (const token of [apiKey.slice(0, -1), `${apiKey}0`, apiKey.toUpperCase()]) {
      const response = await server.api("/pets", { headers: { Authorization: `Bearer ${token}` } })
      await assertError(response, 401, "unauthorized")
    }
  })

  it("matches the scheme name in any case (RFC 9110 §11.1)", async () => {
    for (const scheme of ["bearer", "BEARER", "bEaReR"]) {
      const response = await server.api("/pets", {
        headers: { Authorization: `${scheme} ${apiKey}` },
      })
      assert.equal(response.status, 200, scheme)
    }
  })

  it("accepts every configured key", async () => {
    const response = await server.api("/pets", { headers: { Authorization: "Bearer second-key" } })
    assert.equal(response.status, 200)
  })

  it("decides before anything else: an unknown pet, a bad body or a bad query is still 401", async () => {
    const noKey = { Authorization: "" }
    await assertError(await server.api("/pets/999", { headers: noKey }), 401, "unauthorized")
    await assertError(await server.api("/pets?limit=0", { headers: noKey }), 401, "unauthorized")
    await assertError(await server.api("/pets/abc", { headers: noKey }), 401, "unauthorized")
    await assertError(
      await server.api("/pets", {
        method: "POST",
        body: "{",
        headers: { ...noKey, "Content-Type": "text/plain" },
      }),
      401,
      "unauthorized",
    )
    await assertError(
      await server.api("/pets", { method: "DELETE", headers: noKey }),
      401,
      "unauthorized",
    )
    await assertError(await server.api("/nowhere", { headers: noKey }), 401, "unauthorized")
  })

  it("does not store a pet sent without a valid key", async () => {
    await server.api("/pets", {
      ...postJson({ name: "Sneaky", categoryId: 1 }),
      headers: { Authorization: "Bearer nope", "Content-Type": "application/json" },
    })
    const pets = await readPets(await server.api("/pets?limit=100"))
    assert.equal(
      pets.some((pet) => pet.name === "Sneaky"),
      false,
    )
  })

  it("leaves the health check open", async () => {
    const response = await fetch(`${server.origin}/healthz`)
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), { status: "ok" })
  })
})
