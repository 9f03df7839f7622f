import assert from "node:assert/strict"
import { afterEach, beforeEach, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { openRaw, type RawAnswer } from "@petstore/test-support/raw-connection"
import { startEdgeServer, type EdgeServer } from "../harness/edge-server.js"
import { trustedProxies } from "../../src/index.js"
import { apiKey } from "../harness/server.js"

/**
 * Heads a proxy in front could read otherwise are refused (RFC 9112), and nothing behind them on
 * the connection runs: `Transfer-Encoding` in a request other than HTTP/1.1 (§6.1) and more than
 * one `Host` (§3.2) and a version other than 1.0 and 1.1 (§2.3) are answered 400 `bad_request`,
 * and the connection is closed. What the checks read is what Node's parser framed: no header is
 * hidden from them behind a count (Node's `maxHeadersCount` would drop those past 2,000 from
 * `headers` and `rawHeaders`, yet frame the body by them).
 */

const limit = { timeout: 10_000 }

const smuggledBody = JSON.stringify({ name: "Smuggled", categoryId: 1 })
const smuggled =
  `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
  `Content-Type: application/json\r\nContent-Length: ${smuggledBody.length}\r\n\r\n${smuggledBody}`

const firstBody = JSON.stringify({ name: "First", categoryId: 1 })

/** 2,000 empty header lines: past Node's default `maxHeadersCount`, within the 16 KiB head. */
const padding = Array.from({ length: 2_000 }, (_, index) => `a${index}:\r\n`).join("")

/** Sends `bytes` at once; returns the status of every answer until the connection closed. */
const statusesUntilClosed = async (server: EdgeServer, bytes: string) => {
  const connection = await openRaw(server.origin)
  let received = ""
  connection.socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")))
  connection.socket.write(bytes)
  const closed = await Promise.race([
    connection.closed.then(() => true),
    sleep(3_000, false, { ref: false }),
  ])
  connection.socket.destroy()
  const statuses = [...received.matchAll(/^HTTP\/1\.[01] (\d{3})/gm)].map((match) =>
    Number(match[1]),
  )
  return { statuses, closed, received }
}

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

  describe("what Node's parser frames is what the checks see", () => {
    const head = (method: string, version: string, headers: string) =>
      `${method} /v1/pets ${version}\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
      `Content-Type: application/json\r\n${headers}\r\n`

    for (const method of ["POST", "GET"]) {
      it(
        `a padded HTTP/1.0 ${method} with Transfer-Encoding after 2,000 headers is 400 and closes; the POST behind it never runs`,
        limit,
        async () => {
          const bytes =
            head(
              method,
              "HTTP/1.0",
              `${padding}Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n`,
            ) +
            "0\r\n\r\n" +
            smuggled
          const { statuses, closed, received } = await statusesUntilClosed(server, bytes)
          assert.deepEqual(statuses, [400], received.slice(0, 300))
          assert.match(received, /Transfer-Encoding is not allowed/)
          assert.ok(closed, "the connection stayed open")
          await assertNothingCreated(server)
        },
      )
    }

    for (const version of ["HTTP/0.9", "HTTP/2.0"]) {
      it(
        `a ${version} request line is 400 and closes; the POST behind it never runs`,
        limit,
        async () => {
          for (const framing of [
            "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\n",
            `Connection: keep-alive\r\nContent-Length: ${firstBody.length}\r\n`,
          ]) {
            const body = framing.includes("chunked")
              ? `${firstBody.length.toString(16)}\r\n${firstBody}\r\n0\r\n\r\n`
              : firstBody
            const bytes = head("POST", version, framing) + body + smuggled
            const { statuses, closed, received } = await statusesUntilClosed(server, bytes)
            assert.deepEqual(statuses, [400], received.slice(0, 300))
            assert.match(received, /"code":"bad_request","message":"HTTP\/\d\.\d is not supported/)
            assert.ok(closed, "the connection stayed open")
          }
          await assertNothingCreated(server)
        },
      )
    }

    it("a second Host after 2,000 headers is 400, never 2xx", limit, async () => {
      const { statuses, received } = await statusesUntilClosed(
        server,
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n${padding}Host: y\r\n\r\n`,
      )
      assert.deepEqual(statuses, [400], received.slice(0, 300))
      assert.match(received, /one Host header/)
    })

    it("a second Authorization after 2,000 headers is 401, never 2xx", limit, async () => {
      const { statuses, received } = await statusesUntilClosed(
        server,
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n${padding}` +
          `Authorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`,
      )
      assert.deepEqual(statuses, [401], received.slice(0, 300))
      assert.match(received, /send one Authorization header/)
    })
  })
})

describe("X-Forwarded-For after 2,000 headers, from a named proxy", () => {
  it("names the client, not the proxy", limit, async () => {
    const server = await startEdgeServer({}, {}, trustedProxies(["127.0.0.1"]))
    try {
      const { statuses, received } = await statusesUntilClosed(
        server,
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n${padding}` +
          `X-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n`,
      )
      assert.deepEqual(statuses, [200], received.slice(0, 300))
      assert.deepEqual(
        server.requests().map((line) => line["address"]),
        ["203.0.113.9"],
      )
    } finally {
      await server.close()
    }
  })
})
