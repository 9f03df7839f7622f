import assert from "node:assert/strict"
import type { Socket } from "node:net"
import { after, before, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { openRaw, type RawConnection } from "@petstore/test-support/raw-connection"
import { unwantedBodyBudget } from "../../src/node/index.js"
import { startEdgeServer, type EdgeServer } from "../harness/edge-server.js"
import { apiKey } from "../harness/server.js"

/**
 * A body the server does not want (a create without a key) is not read to its end: the answer
 * says `Connection: close` when more than 256 KiB of it are still to come, or an unknown amount,
 * and the server then reads at most that much more before cutting the connection. A body that
 * was read, or a small one, keeps the connection.
 */

/** How long the server may take to cut the connection once it has answered. */
const cutWithinMs = 2_000
/** What the server may have read before answering (Node reads 64 KiB at a time) and one read over. */
const readSlack = 512 * 1024

const limit = { timeout: 15_000 }

const megabyte = Buffer.alloc(1024 * 1024, "x")

/** Writes as fast as the connection takes it until it closes (or `forMs` passes). */
const flood = async (connection: RawConnection, chunk: (data: Buffer) => Buffer, forMs: number) => {
  const until = performance.now() + forMs
  let closed = false
  void connection.closed.then(() => (closed = true))
  while (!closed && performance.now() < until) {
    if (!connection.socket.write(chunk(megabyte))) {
      await Promise.race([
        new Promise((drained) => connection.socket.once("drain", drained)),
        connection.closed,
        sleep(50),
      ])
    }
  }
}

const createHead = (framing: string) =>
  `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`

describe("an unwanted request body", () => {
  let server: EdgeServer
  /** Each connection's server-side socket, to read how many bytes the server took off it. */
  const accepted: Array<Socket> = []
  before(async () => {
    server = await startEdgeServer()
    server.server.on("connection", (socket: Socket) => accepted.push(socket))
  })
  after(() => server.close())

  const serverSocketOf = (connection: RawConnection) =>
    new Promise<Socket>((found) => {
      const poll = () => {
        const socket = accepted.find((socket) => socket.remotePort === connection.socket.localPort)
        if (socket === undefined) setTimeout(poll, 5)
        else found(socket)
      }
      poll()
    })

  const assertCutAfterBudget = async (framing: string, chunk: (data: Buffer) => Buffer) => {
    const connection = await openRaw(server.origin, { allowHalfOpen: true })
    const serverSide = serverSocketOf(connection)
    connection.socket.write(createHead(framing))
    const flooding = flood(connection, chunk, 10_000)
    const answer = await connection.answer()
    const answeredAt = performance.now()
    assert.equal(answer.status, 401)
    assert.equal(answer.headers.get("connection"), "close")
    const closedAt = await Promise.race([
      connection.closed,
      sleep(cutWithinMs + 3_000, -1, { ref: false }),
    ])
    await flooding
    assert.ok(closedAt !== -1, "the connection is still open")
    assert.ok(
      closedAt - answeredAt < cutWithinMs,
      `cut ${Math.round(closedAt - answeredAt)} ms after the answer`,
    )
    const socket = await serverSide
    assert.ok(socket.destroyed)
    assert.ok(
      socket.bytesRead < unwantedBodyBudget + readSlack,
      `the server read ${socket.bytesRead} bytes`,
    )
  }

  it(
    "declared as 100 GB: the 401 says Connection: close and at most 256 KiB more are read",
    limit,
    async () => {
      await assertCutAfterBudget("Content-Length: 100000000000", (data) => data)
    },
  )

  it(
    "chunked: the 401 says Connection: close and at most 256 KiB more are read",
    limit,
    async () => {
      await assertCutAfterBudget("Transfer-Encoding: chunked", (data) =>
        Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]),
      )
    },
  )

  it(
    "the server lingers over what still arrives rather than resetting at once, then cuts",
    limit,
    async () => {
      const connection = await openRaw(server.origin, { allowHalfOpen: true })
      const serverSide = serverSocketOf(connection)
      connection.socket.write(createHead("Content-Length: 100000000000"))
      connection.socket.write(Buffer.alloc(64 * 1024, "x"))
      const answer = await connection.answer()
      const answeredAt = performance.now()
      assert.equal(answer.headers.get("connection"), "close")
      const socket = await serverSide
      const closedAt = new Promise<number>((closed) =>
        socket.once("close", () => closed(performance.now())),
      )
      // A close with bytes unread would be a reset, which can cost the client its answer.
      await sleep(200)
      connection.socket.write(Buffer.alloc(64 * 1024, "x"))
      await sleep(100)
      assert.equal(socket.destroyed, false, "the server let go at once")
      const cutAt = await Promise.race([closedAt, sleep(cutWithinMs + 3_000, -1, { ref: false })])
      assert.ok(cutAt !== -1, "the server still holds the connection")
      assert.ok(
        cutAt - answeredAt < cutWithinMs,
        `cut ${Math.round(cutAt - answeredAt)} ms after the answer`,
      )
      connection.socket.destroy()
    },
  )

  it(
    "a request sent behind the body once the 401 said Connection: close never runs",
    limit,
    async () => {
      const connection = await openRaw(server.origin, { allowHalfOpen: true })
      connection.socket.write(createHead("Transfer-Encoding: chunked"))
      const answer = await connection.answer()
      assert.equal(answer.headers.get("connection"), "close")
      const body = JSON.stringify({ name: "Smuggled", categoryId: 1 })
      connection.socket.write(
        `3\r\nabc\r\n0\r\n\r\nPOST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      )
      await sleep(200)
      connection.socket.destroy()
      const listed = await fetch(`${server.origin}/v1/pets`, {
        headers: { Authorization: `Bearer ${apiKey}` },
      })
      assert.deepEqual(await listed.json(), [])
    },
  )

  it(
    "no longer than 256 KiB: it is read and dropped, and the connection serves the next request",
    limit,
    async () => {
      const connection = await openRaw(server.origin)
      const body = Buffer.alloc(200 * 1024, "x")
      connection.socket.write(createHead(`Content-Length: ${body.length}`))
      const refused = await connection.answer()
      assert.equal(refused.status, 401)
      assert.notEqual(refused.headers.get("connection"), "close")
      connection.socket.write(body)
      connection.socket.write(
        `GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`,
      )
      const listed = await connection.answer()
      assert.equal(listed.status, 200)
      connection.socket.destroy()
    },
  )
})

describe("a request body that was read", () => {
  let server: EdgeServer
  before(async () => {
    server = await startEdgeServer()
  })
  after(() => server.close())

  it("keeps the connection alive: two creates in turn on one connection", limit, async () => {
    const connection = await openRaw(server.origin)
    for (const name of ["Rex", "Tom"]) {
      const body = JSON.stringify({ name, categoryId: 1 })
      connection.socket.write(
        `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      )
      const created = await connection.answer()
      assert.equal(created.status, 201, created.body)
      assert.notEqual(created.headers.get("connection"), "close")
    }
    assert.equal(connection.ended(), false)
    connection.socket.destroy()
  })

  it("keeps the connection alive when the body was chunked and read whole", limit, async () => {
    const connection = await openRaw(server.origin)
    const body = JSON.stringify({ name: "Rex", categoryId: 1 })
    connection.socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
    )
    const created = await connection.answer()
    assert.equal(created.status, 201, created.body)
    assert.notEqual(created.headers.get("connection"), "close")
    connection.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert.equal((await connection.answer()).status, 200)
    connection.socket.destroy()
  })
})
