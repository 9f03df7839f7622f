import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { exchange, type RawResponse } from "@petstore/test-support/raw-exchange"
import { sampleValue, scrape } from "@petstore/test-support/prometheus-text"
import { startEdgeServer, type EdgeServer } from "../harness/edge-server.js"

/**
 * What the server refuses before the app sees it (Node's own refusals, made the Error body, and
 * the heads RFC 9112 rules out) is logged at `info` with the request id the answer carries and
 * the client's address, and counted in `petstore_http_refusals_total{status,reason}`.
 */

interface Case {
  readonly name: string
  readonly request: string
  readonly status: number
  readonly reason: string
}

const cases: ReadonlyArray<Case> = [
  {
    name: "bytes that are not HTTP",
    request: "NOT HTTP AT ALL\r\n\r\n",
    status: 400,
    reason: "bad_request",
  },
  {
    name: "headers over Node's 16 KiB",
    request: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    status: 431,
    reason: "headers_too_large",
  },
  {
    name: "an Expect other than 100-continue",
    request: "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nX-Request-Id: edge-417\r\n\r\n",
    status: 417,
    reason: "expectation_failed",
  },
  {
    name: "CONNECT",
    request: "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
    status: 400,
    reason: "tunnel",
  },
  {
    name: "headers slower than the headers timeout",
    request: "GET /healthz HTTP/1.1\r\nHost: x\r\n",
    status: 408,
    reason: "request_timeout",
  },
  {
    name: "an HTTP/1.1 request without Host",
    request: "GET /healthz HTTP/1.1\r\n\r\n",
    status: 400,
    reason: "host_header",
  },
  {
    name: "two Host headers",
    request: "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nX-Request-Id: edge-hosts\r\n\r\n",
    status: 400,
    reason: "host_header",
  },
  {
    name: "Transfer-Encoding in HTTP/1.0",
    request: "POST /v1/pets HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    status: 400,
    reason: "framing",
  },
  {
    name: "an HTTP version other than 1.0 and 1.1",
    request: "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n",
    status: 400,
    reason: "http_version",
  },
]

describe("refusals before the app", () => {
  let server: EdgeServer
  const answers = new Map<string, RawResponse>()
  before(async () => {
    server = await startEdgeServer({ headersTimeoutMs: 500, requestTimeoutMs: 1_000 })
    for (const { name, request } of cases) {
      const outcome = await exchange(server.origin, request, { head: false, timeoutMs: 5_000 })
      assert.equal(outcome.kind, "answered", `${name}: ${outcome.kind}`)
      if (outcome.kind === "answered") answers.set(name, outcome.response)
    }
  })
  after(() => server.close())

  for (const { name, status, reason } of cases) {
    it(`${name}: ${status}, logged at info with its request id and address`, () => {
      const answer = answers.get(name)
      assert.ok(answer !== undefined)
      assert.equal(answer.status, status)
      const requestId = answer.headers.get("x-request-id")
      assert.ok(requestId !== undefined && requestId !== "")
      const lines = server.refusals().filter((line) => line["requestId"] === requestId)
      assert.equal(lines.length, 1, JSON.stringify(server.refusals()))
      assert.deepEqual(
        { ...lines[0], time: undefined, pid: undefined },
        {
          level: "info",
          message: "refused",
          reason,
          status,
          address: "127.0.0.1",
          requestId,
          time: undefined,
          pid: undefined,
        },
      )
    })
  }

  it("keeps the request's own X-Request-Id when the head could be read", () => {
    assert.equal(
      answers.get("an Expect other than 100-continue")?.headers.get("x-request-id"),
      "edge-417",
    )
    assert.equal(answers.get("two Host headers")?.headers.get("x-request-id"), "edge-hosts")
  })

  it("counts each in petstore_http_refusals_total by status and reason", async () => {
    const samples = await scrape(server.origin)
    const expected = new Map<string, number>()
    for (const { status, reason } of cases) {
      const key = `${status} ${reason}`
      expected.set(key, (expected.get(key) ?? 0) + 1)
    }
    for (const [key, count] of expected) {
      const [status = "", reason = ""] = key.split(" ")
      assert.equal(
        sampleValue(samples, "petstore_http_refusals_total", { status, reason }),
        count,
        key,
      )
    }
  })
})
