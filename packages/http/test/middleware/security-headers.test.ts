import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { postJson } from "@petstore/test-support/requests"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

describe("security headers", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  const withKey = (path: string, init: RequestInit = {}) => server.api(path, init)

  it("every response to a request with a valid key is no-store and nosniff, errors included", async () => {
    const responses = [
      await withKey("/pets"),
      await withKey("/pets", postJson({ name: "Rex", categoryId: 1 })),
      await withKey("/pets/1"),
      await withKey("/pets?limit=0"),
      await withKey("/pets/424242"),
      await withKey("/nowhere"),
      await withKey("/pets", { method: "DELETE" }),
      await withKey("/pets", { method: "OPTIONS" }),
    ]
    for (const response of responses) {
      const context = `${response.url} → ${response.status}`
      assert.equal(response.headers.get("cache-control"), "no-store", context)
      assert.equal(response.headers.get("x-content-type-options"), "nosniff", context)
      assert.equal(response.headers.get("x-powered-by"), null, context)
    }
  })

  it("responses without a key are nosniff too, and never name the framework", async () => {
    for (const response of [
      await fetch(`${server.origin}/v1/pets`),
      await fetch(`${server.origin}/healthz`),
      await fetch(`${server.origin}/v1/openapi.json`),
    ]) {
      assert.equal(response.headers.get("x-content-type-options"), "nosniff", response.url)
      assert.equal(response.headers.get("x-powered-by"), null)
    }
  })

  it("Node's own replies carry nosniff", async () => {
    const answer = await rawRequest(server.origin, "NOT HTTP\r\n\r\n")
    assert.match(answer, /\r\nX-Content-Type-Options: nosniff\r\n/i)
  })

  it("the key never comes back in a response", async () => {
    const response = await withKey("/pets/abc")
    const text = `${[...response.headers].join("\n")}\n${await response.text()}`
    assert.doesNotMatch(text, new RegExp(apiKey))
  })
})
