import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { StorageUnavailable } from "@petstore/core"
import { failingRepository } from "@petstore/storage/testing"
import type { LogLine } from "@petstore/test-support/log-capture"
import { postJson } from "@petstore/test-support/requests"
import { Effect } from "effect"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

const accessLines = (lines: ReadonlyArray<LogLine>, requestId: string) =>
  lines.filter((line) => line["message"] === "request" && line["requestId"] === requestId)

const withoutKey = { headers: { Authorization: "" } }

describe("the access log", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  // Each request, its id, and what its one access line must say.
  const cases = [
    {
      name: "a listing",
      send: (id: string) => server.api("/pets", { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "/v1/pets", operation: "listPets", status: 200 },
    },
    {
      name: "a create",
      send: (id: string) =>
        server.api("/pets", {
          ...postJson({ name: "Rex", categoryId: 1 }),
          headers: { "Content-Type": "application/json", "X-Request-Id": id },
        }),
      line: { method: "POST", route: "/v1/pets", operation: "createPet", status: 201 },
    },
    {
      name: "a pet that does not exist (404), by its route template",
      send: (id: string) => server.api("/pets/424242", { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "/v1/pets/:petId", operation: "getPet", status: 404 },
    },
    {
      name: "a request without a key (401)",
      send: (id: string) =>
        server.api("/pets/7", { headers: { Authorization: "", "X-Request-Id": id } }),
      line: { method: "GET", route: "/v1/pets/:petId", operation: "getPet", status: 401 },
    },
    {
      name: "a wrong key (401)",
      send: (id: string) =>
        server.api("/pets", {
          headers: { Authorization: "Bearer not-the-key", "X-Request-Id": id },
        }),
      line: { method: "GET", route: "/v1/pets", operation: "listPets", status: 401 },
    },
    {
      name: "an unknown path with a key (404), under a fixed label",
      send: (id: string) =>
        server.api("/secret-looking/path-123", { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "unmatched", status: 404 },
    },
    {
      name: "an unknown path without a key (401)",
      send: (id: string) =>
        fetch(`${server.origin}/other/path-456`, { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "unmatched", status: 401 },
    },
    {
      name: "a method the path does not allow (405), by the path's template",
      send: (id: string) =>
        server.api("/pets/9", { method: "DELETE", headers: { "X-Request-Id": id } }),
      line: { method: "DELETE", route: "/v1/pets/:petId", status: 405 },
    },
    {
      name: "a public route",
      send: (id: string) => fetch(`${server.origin}/healthz`, { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "/healthz", status: 200 },
    },
  ]

  for (const [index, { name, send, line }] of cases.entries()) {
    it(`writes exactly one line for ${name}`, async () => {
      const id = `access-${index}`
      const response = await send(id)
      await response.arrayBuffer()
      const lines = accessLines(server.logLines(), id)
      assert.equal(lines.length, 1, JSON.stringify(server.logLines()))
      const [access] = lines
      assert.equal(access?.["level"], "info")
      assert.deepEqual(
        {
          method: access?.["method"],
          route: access?.["route"],
          operation: access?.["operation"],
          status: access?.["status"],
        },
        { operation: undefined, ...line },
      )
      assert.equal(typeof access?.["durationMs"], "number")
      assert.ok(Number(access?.["durationMs"]) >= 0)
    })
  }

  it("names the key by its position in PETSTORE_API_KEYS, which no dictionary reverses", async () => {
    await server.api("/pets", { headers: { "X-Request-Id": "with-key" } })
    await server.api("/pets", { headers: { ...withoutKey.headers, "X-Request-Id": "no-key" } })
    const [admitted] = accessLines(server.logLines(), "with-key")
    assert.equal(admitted?.["keyId"], "env:1")
    const [refused] = accessLines(server.logLines(), "no-key")
    assert.equal(refused?.["keyId"], undefined)
  })

  it("names the client address the limits count, on admitted and refused requests alike", async () => {
    await server.api("/pets", { headers: { "X-Request-Id": "address-admitted" } })
    await server.api("/pets", {
      headers: { ...withoutKey.headers, "X-Request-Id": "address-refused" },
    })
    for (const requestId of ["address-admitted", "address-refused"]) {
      const [line] = accessLines(server.logLines(), requestId)
      assert.equal(line?.["address"], "127.0.0.1", requestId)
    }
  })

  it("never writes a path as sent", () => {
    const written = server.logLines().map((line) => JSON.stringify(line))
    assert.ok(written.length > cases.length)
    for (const raw of ["/pets/424242", "secret-looking", "path-123", "path-456", "/pets/9"]) {
      assert.ok(!written.some((line) => line.includes(raw)), `${raw} was logged`)
    }
  })

  it("never writes the key or the Authorization header", () => {
    const written = server.logLines().map((line) => JSON.stringify(line))
    for (const secret of [apiKey, "not-the-key", "Bearer"]) {
      assert.ok(!written.some((line) => line.includes(secret)), `${secret} was logged`)
    }
  })
})

describe("the lines about a request name its id", () => {
  it("a storage failure's warning", async () => {
    const server = await startServer({
      layer: failingRepository(
        Effect.fail(new StorageUnavailable({ cause: new Error("disk gone") })),
      ),
    })
    try {
      const response = await server.api("/pets", { headers: { "X-Request-Id": "storage-trouble" } })
      assert.equal(response.status, 503)
      const lines = server.logLines().filter((line) => line["requestId"] === "storage-trouble")
      assert.deepEqual(
        lines.map((line) => [line["level"], line["message"]]),
        [
          ["warn", "storage unavailable"],
          ["info", "request"],
        ],
      )
      assert.equal(lines[0]?.["operation"], "listPets")
      assert.match(String(lines[0]?.["cause"]), /disk gone/)
    } finally {
      await server.close()
    }
  })

  it("an unexpected failure's error, with its stack", async () => {
    const server = await startServer({
      layer: failingRepository(Effect.die(new Error("secret internal detail"))),
    })
    try {
      const response = await server.api("/pets", { headers: { "X-Request-Id": "defect" } })
      assert.equal(response.status, 500)
      const lines = server.logLines().filter((line) => line["requestId"] === "defect")
      assert.deepEqual(
        lines.map((line) => [line["level"], line["message"], line["status"]]),
        [
          ["error", "request failed unexpectedly", undefined],
          ["info", "request", 500],
        ],
      )
      assert.match(String(lines[0]?.["error"]), /secret internal detail/)
    } finally {
      await server.close()
    }
  })
})
