import assert from "node:assert/strict"
import { afterEach, beforeEach, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { openRaw, startEdgeServer, type EdgeServer, type RawAnswer } from "./edge-harness.js"
import { apiKey } from "./harness.js"

/**
 * Heads a proxy in front could read otherwise are refused (RFC 9112), and nothing behind them on
 * the connection runs: `Transfer-Encoding` in an HTTP/1.0 request (§6.1) and more than one `Host`
 * (§3.2) are answered 400 `bad_request` and the connection is closed.
 */

const limit = { timeout: 10_000 }

const smuggledBody = JSON.stringify({ name: "Smuggled", categoryId: 1 })
const smuggled =
  `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${smuggledBody.length}\r\n\r\n${smuggledBody}`

const firstBody = JSON.stringify({ name: "First", categoryId: 1 })

/** Sends `bytes` at once; returns the first answer and whether the server then closed. */
const sendAll = async (server: EdgeServer, bytes: string) => {
  const connection = await openRaw(server.origin)
  connection.socket.write(bytes)
  const answer = await connection.answer()
  const closed = await Promise.race([
    connection.closed.then(() => true),
    sleep(2_000, false, { ref: false }),
  ])
  connection.socket.destroy()
  return { answer, closed }
}

const assertBadRequest = (answer: RawAnswer, message: RegExp) => {
  assert.equal(answer.status, 400, answer.body)
  assert.equal(answer.headers.get("connection"), "close")
  const body: unknown = JSON.parse(answer.body)
  assert.ok(typeof body === "object" && body !== null)
  assert.deepEqual(Object.keys(body).sort(), ["code", "message", "status"])
  assert.ok("code" in body && body.code === "bad_request", answer.body)
  assert.ok("status" in body && body.status === 400, answer.body)
  assert.ok("message" in body && typeof body.message === "string")
  assert.match(body.message, message)
}

/** Asserts the app saw no create: none was logged, none was stored. */
const assertNothingCreated = async (server: EdgeServer) => {
  // A request run on the closed connection would have been started by now; let it finish.
  await sleep(100)
  const creates = server.requests().filter((line) => line["method"] === "POST")
  assert.deepEqual(creates, [], "the app saw a create")
  const response = await fetch(`${server.origin}/v1/pets`, {
    headers: { Authorization: `Bearer ${apiKey}` },
  })
  assert.equal(response.status, 200)
  assert.deepEqual(await response.json(), [])
}

describe("request framing", () => {
  let server: EdgeServer
  beforeEach(async () => {
    server = await startEdgeServer()
  })
  afterEach(() => server.close())

  it(
    "an HTTP/1.0 request with Transfer-Encoding is 400 and closes; the request smuggled after it never runs",
    limit,
    async () => {
      const head =
        `POST /v1/pets HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n`
      const chunked = `${firstBody.length.toString(16)}\r\n${firstBody}\r\n0\r\n\r\n`
      const { answer, closed } = await sendAll(server, head + chunked + smuggled)
      assertBadRequest(answer, /Transfer-Encoding/)
      assert.ok(closed, "the connection stayed open")
      await assertNothingCreated(server)
    },
  )

  it("an HTTP/1.0 request with Content-Length is still served", limit, async () => {
    const { answer } = await sendAll(
      server,
      `POST /v1/pets HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${firstBody.length}\r\n\r\n${firstBody}`,
    )
    assert.equal(answer.status, 201, answer.body)
    assert.equal(server.requests().filter((line) => line["status"] === 201).length, 1)
  })

  it(
    "two Host headers are 400 and close; the request pipelined after them never runs",
    limit,
    async () => {
      for (const hosts of ["Host: a\r\nHost: b\r\n", "Host: a\r\nhost: a\r\n"]) {
        const { answer, closed } = await sendAll(
          server,
          `POST /v1/pets HTTP/1.1\r\n${hosts}Authorization: Bearer ${apiKey}\r\n` +
            `Content-Type: application/json\r\nContent-Length: ${firstBody.length}\r\n\r\n${firstBody}` +
            smuggled,
        )
        assertBadRequest(answer, /one Host header/)
        assert.ok(closed, "the connection stayed open")
      }
      await assertNothingCreated(server)
    },
  )

  it("two Host headers in an HTTP/1.0 request are 400 too", limit, async () => {
    const { answer } = await sendAll(server, "GET /healthz HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n")
    assertBadRequest(answer, /one Host header/)
  })
})
