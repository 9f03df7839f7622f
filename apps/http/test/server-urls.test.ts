import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either } from "effect"
import { readConfig } from "../src/config.js"
import { apiServers } from "../src/openapi/servers.js"

const problemsOf = (env: Record<string, string>) =>
  Either.match(readConfig(env), { onLeft: (problems) => problems.join("\n"), onRight: () => "" })

const serversOf = (env: Record<string, string>) => apiServers(Either.getOrThrow(readConfig(env)))

describe("PETSTORE_PUBLIC_URL and PETSTORE_STAGING_URL", () => {
  it("default to the server's own address and base path, staging the same as production", () => {
    assert.deepEqual(serversOf({}), [
      { url: "http://127.0.0.1:8080/v1", description: "Production" },
      { url: "http://127.0.0.1:8080/v1", description: "Staging" },
    ])
    assert.deepEqual(
      serversOf({ HOST: "::1", PORT: "9000", PETSTORE_BASE_PATH: "/api/v2" }).map(({ url }) => url),
      ["http://[::1]:9000/api/v2", "http://[::1]:9000/api/v2"],
    )
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
