import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import {
  openApiDocument,
  petOperations,
  sameOriginServers,
  type OpenApiDocument,
} from "../../src/index.js"
import { startServer, type TestServer } from "../harness/server.js"

const asJson = (value: OpenApiDocument): unknown => JSON.parse(JSON.stringify(value))

describe("GET /v1/openapi.json", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("serves the document, without an API key", async () => {
    const response = await fetch(`${server.origin}/v1/openapi.json`)
    assert.equal(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
    const expected = openApiDocument({
      basePath: "/v1",
      servers: sameOriginServers("/v1"),
      operations: petOperations,
    })
    assert.deepEqual(await response.json(), asJson(expected))
  })

  it("is served under another base path too", async () => {
    const other = await startServer({ basePath: "/api/v2" })
    try {
      const response = await fetch(`${other.origin}/api/v2/openapi.json`)
      assert.equal(response.status, 200)
      const served: unknown = await response.json()
      assert.ok(typeof served === "object" && served !== null && "servers" in served)
      assert.deepEqual(served.servers, [{ url: "/api/v2", description: "This server" }])
    } finally {
      await other.close()
    }
  })
})
