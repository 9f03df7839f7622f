import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { StorageUnavailable } from "@petstore/core"
import { failingRepository } from "@petstore/storage/testing"
import { Effect } from "effect"
import { assertError } from "@petstore/test-support/error-body"
import { postJson } from "@petstore/test-support/requests"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

describe("errors the router and Node produce", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("an unknown path is 404 with the Error body, inside and outside the base path", async () => {
    const withKey = { headers: { Authorization: `Bearer ${apiKey}` } }
    await assertError(await server.api("/nowhere"), 404, "not_found")
    await assertError(await server.api("/pets/1/owner"), 404, "not_found")
    await assertError(await fetch(`${server.origin}/`, withKey), 404, "not_found")
    await assertError(await fetch(`${server.origin}/pets`, withKey), 404, "not_found")
  })

  it("an unknown path anywhere needs a key first: without one it is 401, revealing nothing", async () => {
    for (const path of ["/", "/pets", "/v1/nowhere", "/healthz/x", "/docs/other.js"]) {
      await assertError(await fetch(`${server.origin}${path}`), 401, "unauthorized")
    }
  })

  it("an unknown method on an unknown path is 404 after the key, not 405 with an empty Allow", async () => {
    const answer = await rawRequest(
      server.origin,
      `PROPFIND /nowhere HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 404 /)
    assert.doesNotMatch(answer, /\r\nallow:/i)
    assert.match(answer, /"code":"not_found"/)
  })

  it("OPTIONS on a known path is 204 with an Allow that includes OPTIONS, and no body", async () => {
    for (const [path, allow] of [
      ["/pets", "HEAD, GET, POST, OPTIONS"],
      ["/pets/1", "HEAD, GET, OPTIONS"],
    ] as const) {
      const response = await server.api(path, { method: "OPTIONS" })
      assert.equal(response.status, 204, path)
      assert.equal(response.headers.get("allow"), allow, path)
      assert.equal(response.headers.get("content-type"), null)
      assert.equal(await response.text(), "")
    }
    await assertError(
      await server.api("/pets", { method: "OPTIONS", headers: { Authorization: "" } }),
      401,
      "unauthorized",
    )
  })

  it("a known path with another method is 405 with Allow", async () => {
    const cases: ReadonlyArray<[string, string, string]> = [
      ["DELETE", "/pets", "HEAD, GET, POST, OPTIONS"],
      ["PUT", "/pets", "HEAD, GET, POST, OPTIONS"],
      ["PATCH", "/pets/1", "HEAD, GET, OPTIONS"],
      ["POST", "/pets/1", "HEAD, GET, OPTIONS"],
      ["DELETE", "/pets/1", "HEAD, GET, OPTIONS"],
    ]
    for (const [method, path, allow] of cases) {
      const response = await server.api(path, { method })
      await assertError(response, 405, "method_not_allowed")
      assert.equal(response.headers.get("allow"), allow, `${method} ${path}`)
    }
  })

  it("a method the router has no routes for at all is 405 too, not 501", async () => {
    const answer = await rawRequest(
      server.origin,
      `PROPFIND /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 405 /)
    assert.match(answer, /"code":"method_not_allowed"/)
  })

  it("a request Node cannot parse gets the Error body, not plain text", async () => {
    const answer = await rawRequest(server.origin, "NOT HTTP AT ALL\r\n\r\n")
    assert.match(answer, /^HTTP\/1\.1 400 /)
    assert.match(answer, /content-type: application\/json/i)
    assert.match(answer, /\{"code":"bad_request","message":"[^"]+","status":400\}$/)
  })

  it("headers too large get 431 with the Error body", async () => {
    const answer = await rawRequest(
      server.origin,
      `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 431 /)
    assert.match(answer, /"status":431\}$/)
  })

  it("a malformed percent-encoding in the path is a 4xx Error body", async () => {
    const response = await server.api("/pets/%E0%A4%A")
    await assertError(response, 400, "invalid_path_parameter")
  })
})

describe("failures below the HTTP layer", () => {
  it("storage unavailable is 503 with Retry-After and the Error body", async () => {
    const server = await startServer({
      layer: failingRepository(
        Effect.fail(new StorageUnavailable({ cause: new Error("disk gone") })),
      ),
    })
    try {
      for (const response of [
        await server.api("/pets"),
        await server.api("/pets", postJson({ name: "Rex", categoryId: 1 })),
        await server.api("/pets/1"),
      ]) {
        const message = await assertError(response, 503, "storage_unavailable")
        assert.doesNotMatch(message, /disk gone/)
        assert.equal(response.headers.get("retry-after"), "1")
      }
      const logged = server.logged.filter((line) => line.startsWith("storage unavailable"))
      assert.deepEqual(
        logged.map((line) => /"operation":"(\w+)"/.exec(line)?.[1]),
        ["listPets", "createPet", "getPet"],
      )
      assert.ok(
        logged.every((line) => line.includes("disk gone")),
        "the cause is logged",
      )
    } finally {
      await server.close()
    }
  })

  it("a defect is 500 with the Error body, logged, and no stack or detail reaches the client", async () => {
    const server = await startServer({
      layer: failingRepository(Effect.die(new Error("secret internal detail"))),
    })
    try {
      const response = await server.api("/pets")
      const message = await assertError(response, 500, "internal_error")
      assert.doesNotMatch(message, /secret|at |Error/)
      assert.ok(server.logged.some((line) => line.includes("secret internal detail")))
      const next = await server.api("/pets/1")
      await assertError(next, 500, "internal_error")
    } finally {
      await server.close()
    }
  })
})
