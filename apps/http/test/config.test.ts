import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either } from "effect"
import { readConfig } from "../src/config.js"

const problemsOf = (env: Record<string, string>) =>
  Either.match(readConfig(env), { onLeft: (problems) => problems.join("\n"), onRight: () => "" })

describe("readConfig", () => {
  it("defaults to 127.0.0.1:8080 under /v1 with no keys", () => {
    const config = Either.getOrThrow(readConfig({ PETSTORE_STORAGE: "memory" }))
    assert.equal(config.host, "127.0.0.1")
    assert.equal(config.port, 8080)
    assert.equal(config.basePath, "/v1")
    assert.deepEqual(config.apiKeys, [])
  })

  it("reads PORT, HOST, PETSTORE_BASE_PATH and comma-separated PETSTORE_API_KEYS", () => {
    const config = Either.getOrThrow(
      readConfig({
        PORT: "9000",
        HOST: "0.0.0.0",
        PETSTORE_BASE_PATH: "/api/v1/",
        PETSTORE_API_KEYS: " one , two,,three ",
        PETSTORE_STORAGE: "memory",
      }),
    )
    assert.equal(config.port, 9000)
    assert.equal(config.host, "0.0.0.0")
    assert.equal(config.basePath, "/api/v1")
    assert.deepEqual(config.apiKeys, ["one", "two", "three"])
  })

  it("names every invalid setting at once", () => {
    const problems = problemsOf({
      PORT: "http",
      PETSTORE_BASE_PATH: "v1",
      PETSTORE_API_KEYS: "good,has space",
      PETSTORE_STORAGE: "floppy",
    })
    assert.match(problems, /PORT/)
    assert.match(problems, /PETSTORE_BASE_PATH/)
    assert.match(problems, /PETSTORE_API_KEYS: key 2/)
    assert.match(problems, /PETSTORE_STORAGE/)
  })

  it("refuses ports outside 0..65535", () => {
    assert.match(problemsOf({ PORT: "65536" }), /PORT/)
    assert.match(problemsOf({ PORT: "-1" }), /PORT/)
  })
})
