import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either } from "effect"
import { readConfig } from "../src/settings/read-config.js"
import { apiServers } from "@petstore/http"

const problemsOf = (env: Record<string, string>) =>
  Either.match(readConfig(env), { onLeft: (problems) => problems.join("\n"), onRight: () => "" })

const serversOf = (env: Record<string, string>) => apiServers(Either.getOrThrow(readConfig(env)))

describe("PETSTORE_PUBLIC_URL and PETSTORE_STAGING_URL", () => {
  it("unset, name the server the document is fetched from, whatever HOST and PORT are", () => {
    assert.deepEqual(serversOf({}), [{ url: "/v1", description: "This server" }])
    assert.deepEqual(serversOf({ HOST: "0.0.0.0", PORT: "0", PETSTORE_BASE_PATH: "/api/v2" }), [
      { url: "/api/v2", description: "This server" },
    ])
    assert.deepEqual(serversOf({ PETSTORE_BASE_PATH: "/" }), [
      { url: "/", description: "This server" },
    ])
  })

  it("name the production and staging base URLs, without a trailing slash", () => {
    assert.deepEqual(
      serversOf({
        PETSTORE_PUBLIC_URL: "https://pets.example.com/v1/",
        PETSTORE_STAGING_URL: "http://staging.internal:8443/petstore/v1",
      }),
      [
        { url: "https://pets.example.com/v1", description: "Production" },
        { url: "http://staging.internal:8443/petstore/v1", description: "Staging" },
      ],
    )
  })

  it("name production alone when no staging URL is set", () => {
    assert.deepEqual(serversOf({ PETSTORE_PUBLIC_URL: "https://pets.example.com/v1" }), [
      { url: "https://pets.example.com/v1", description: "Production" },
    ])
  })

  it("with a staging URL alone, name this server first, then staging", () => {
    assert.deepEqual(serversOf({ PETSTORE_STAGING_URL: "https://staging.example.com/v1" }), [
      { url: "/v1", description: "This server" },
      { url: "https://staging.example.com/v1", description: "Staging" },
    ])
  })

  it("refuse what is not an http(s) URL ending in the base path", () => {
    assert.match(problemsOf({ PETSTORE_PUBLIC_URL: "pets.example.com/v1" }), /PETSTORE_PUBLIC_URL/)
    assert.match(problemsOf({ PETSTORE_PUBLIC_URL: "ftp://pets.example.com/v1" }), /http or https/)
    assert.match(problemsOf({ PETSTORE_STAGING_URL: "https://x.example/v1?a=1" }), /STAGING/)
    assert.match(
      problemsOf({ PETSTORE_STAGING_URL: "https://x.example/v2" }),
      /PETSTORE_STAGING_URL must end in the base path \/v1/,
    )
    assert.match(
      problemsOf({ PETSTORE_BASE_PATH: "/api", PETSTORE_PUBLIC_URL: "https://x.example/v1" }),
      /end in the base path \/api/,
    )
    assert.equal(
      problemsOf({ PETSTORE_BASE_PATH: "/api", PETSTORE_PUBLIC_URL: "https://x.example/api" }),
      "",
    )
  })
})
