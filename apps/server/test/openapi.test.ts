import assert from "node:assert/strict"
import { readFile } from "node:fs/promises"
import { describe, it } from "node:test"
import { isDeepStrictEqual } from "node:util"
import { MemoryPetRepository } from "@petstore/storage"
import { Either, ManagedRuntime } from "effect"
import { createApp, apiServers, type OpenApiDocument } from "@petstore/http"
import { closeGracefully, createServer, listen } from "@petstore/http/node"
import { readConfig } from "../src/settings/read-config.js"
import { defaultOpenApiDocument } from "../src/default-document.js"

// The document of the default configuration, as apps/server/openapi.json holds it, and the
// servers of a configuration; what the document says is tested in packages/http.

const document = defaultOpenApiDocument()
const asJson = (value: OpenApiDocument): unknown => JSON.parse(JSON.stringify(value))

describe("the OpenAPI document", () => {
  it("is what apps/server/openapi.json holds", async () => {
    const committed: unknown = JSON.parse(
      await readFile(new URL("../openapi.json", import.meta.url), "utf8"),
    )
    assert.ok(
      isDeepStrictEqual(committed, asJson(document)),
      "apps/server/openapi.json is stale: run `npm run openapi -w @petstore/server` and commit it",
    )
  })

  it("is OpenAPI 3.1.0 of version 1.0.0; by default its server is the address it was fetched from", () => {
    assert.equal(document.openapi, "3.1.0")
    assert.equal(document.info.version, "1.0.0")
    assert.deepEqual(document.servers, [{ url: "/v1", description: "This server" }])
  })
})

describe("GET /v1/openapi.json", () => {
  it("names the servers it is given: those of the configuration", async () => {
    const config = Either.getOrThrow(
      readConfig({
        PETSTORE_PUBLIC_URL: "https://pets.example.com/v1",
        PETSTORE_STAGING_URL: "https://staging.pets.example.com/v1",
      }),
    )
    const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
    const app = createApp({ runtime, apiKeys: ["k"], servers: apiServers(config) })
    const http = createServer(app)
    const port = await listen(http, 0, "127.0.0.1")
    try {
      const response = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)
      const served: unknown = await response.json()
      assert.ok(typeof served === "object" && served !== null && "servers" in served)
      assert.deepEqual(served.servers, [
        { url: "https://pets.example.com/v1", description: "Production" },
        { url: "https://staging.pets.example.com/v1", description: "Staging" },
      ])
    } finally {
      await closeGracefully(http, 1000)
      await runtime.dispose()
    }
  })
})
