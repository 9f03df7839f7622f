import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { StorageUnavailable } from "@petstore/core"
import { failingRepository } from "@petstore/storage/testing"
import { Effect } from "effect"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The `X-Request-Id` of a raw HTTP answer. */
const rawRequestId = (answer: string): string | undefined =>
  /\r\nX-Request-Id: ([^\r]*)\r\n/i.exec(answer)?.[1]

/** The id the server gives a request sent with these `X-Request-Id` header lines, over a raw socket. */
const idGiven = async (server: TestServer, headerLines: ReadonlyArray<string>) => {
  const answer = await rawRequest(
    server.origin,
    [
      "GET /v1/pets HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${apiKey}`,
      ...headerLines,
      "Connection: close",
      "",
      "",
    ].join("\r\n"),
  )
  assert.match(answer, /^HTTP\/1\.1 200 /)
  return rawRequestId(answer)
}

describe("request ids", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("echoes an acceptable client id: 1 to 128 characters from 0x21 to 0x7E", async () => {
    const everyCharacter = Array.from({ length: 0x7e - 0x21 + 1 }, (_, index) =>
      String.fromCharCode(0x21 + index),
    ).join("")
    for (const id of ["a", "!", "~".repeat(128), everyCharacter, "0f8e-trace/span:1"]) {
      const response = await server.api("/pets", { headers: { "X-Request-Id": id } })
      assert.equal(response.status, 200)
      assert.equal(response.headers.get("x-request-id"), id)
    }
  })

  it("makes a new id for a request without one, different each time", async () => {
    const ids = new Set<string>()
    for (let index = 0; index < 5; index += 1) {
      const id = (await server.api("/pets")).headers.get("x-request-id") ?? ""
      assert.match(id, uuid)
      ids.add(id)
    }
    assert.equal(ids.size, 5)
  })

  it("replaces an unacceptable id rather than refusing the request", async () => {
    const unacceptable = [
      "a".repeat(129),
      "with space",
      "tab\there",
      "caf\u00e9",
      "\u2028line-separator",
      "",
    ]
    for (const sent of unacceptable) {
      const id = await idGiven(server, [`X-Request-Id: ${sent}`])
      assert.match(id ?? "", uuid, JSON.stringify(sent))
    }
  })

  it("names Node's own refusal of control characters with a new id", async () => {
    for (const sent of ["bell\x07", "x\x01y", "delete\x7f"]) {
      const answer = await rawRequest(
        server.origin,
        `GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: ${sent}\r\n\r\n`,
      )
      assert.match(answer, /^HTTP\/1\.1 400 /)
      assert.match(rawRequestId(answer) ?? "", uuid, JSON.stringify(sent))
    }
  })

  it("replaces two ids sent at once, even when each is acceptable", async () => {
    const id = await idGiven(server, ["X-Request-Id: first", "X-Request-Id: second"])
    assert.match(id ?? "", uuid)
  })

  it("is on every answer: 401, 404, 405, 503 and public routes", async () => {
    const answers = [
      await server.api("/pets", { headers: { Authorization: "", "X-Request-Id": "r-401" } }),
      await server.api("/pets/99999", { headers: { "X-Request-Id": "r-404" } }),
      await server.api("/nowhere", { headers: { "X-Request-Id": "r-404b" } }),
      await server.api("/pets", { method: "PUT", headers: { "X-Request-Id": "r-405" } }),
      await fetch(`${server.origin}/healthz`, { headers: { "X-Request-Id": "r-health" } }),
      await fetch(`${server.origin}/docs`, { headers: { "X-Request-Id": "r-docs" } }),
    ]
    assert.deepEqual(
      answers.map((response) => [response.status, response.headers.get("x-request-id")]),
      [
        [401, "r-401"],
        [404, "r-404"],
        [404, "r-404b"],
        [405, "r-405"],
        [200, "r-health"],
        [200, "r-docs"],
      ],
    )
    const failing = await startServer({
      layer: failingRepository(Effect.fail(new StorageUnavailable({ cause: new Error("gone") }))),
    })
    try {
      const response = await failing.api("/pets", { headers: { "X-Request-Id": "r-503" } })
      assert.equal(response.status, 503)
      assert.equal(response.headers.get("x-request-id"), "r-503")
    } finally {
      await failing.close()
    }
  })

  it("is on Node's own replies: an Expect it cannot meet, a missing Host, a request it cannot parse", async () => {
    const expectation = await rawRequest(
      server.origin,
      "GET /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: teapot\r\nX-Request-Id: r-417\r\n\r\n",
    )
    assert.match(expectation, /^HTTP\/1\.1 417 /)
    assert.equal(rawRequestId(expectation), "r-417")

    const noHost = await rawRequest(
      server.origin,
      "GET /v1/pets HTTP/1.1\r\nX-Request-Id: r-400\r\n\r\n",
    )
    assert.match(noHost, /^HTTP\/1\.1 400 /)
    assert.equal(rawRequestId(noHost), "r-400")

    const garbage = await rawRequest(server.origin, "NOT HTTP AT ALL\r\n\r\n")
    assert.match(garbage, /^HTTP\/1\.1 400 /)
    assert.match(rawRequestId(garbage) ?? "", uuid)
  })
})
