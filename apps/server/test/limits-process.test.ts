import assert from "node:assert/strict"
import { once } from "node:events"
import { connect, type Socket } from "node:net"
import { after, before, describe, it } from "node:test"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import { sendTo } from "@petstore/test-support/requests"
import {
  processApiKey,
  processTestTimeout,
  startServerProcess,
  type RunningServer,
} from "./server-process.js"

const corsOrigin = "https://app.example.com"

/** A socket that has had one keep-alive answer, so the server surely counts its connection. */
const openConnection = async (origin: string): Promise<Socket> => {
  const { hostname, port } = new URL(origin)
  const socket = connect(Number(port), hostname)
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`)
  await once(socket, "data")
  return socket
}

describe(
  "the limits as main.ts reads them from the environment",
  { timeout: processTestTimeout },
  () => {
    let server: RunningServer
    before(async () => {
      server = await startServerProcess({
        storage: "memory",
        env: {
          PETSTORE_RATE_LIMIT: "2/min",
          PETSTORE_AUTH_FAILURE_LIMIT: "2/min",
          PETSTORE_CORS_ORIGINS: corsOrigin,
          PETSTORE_MAX_CONNECTIONS: "3",
        },
      })
    })
    after(() => server.stop())

    const withKey = { headers: { Authorization: `Bearer ${processApiKey}` } }

    it("refuses connections beyond PETSTORE_MAX_CONNECTIONS and serves again once they close", async () => {
      const open: Array<Socket> = []
      for (let i = 0; i < 3; i++) open.push(await openConnection(server.origin))
      const { hostname, port } = new URL(server.origin)
      const refused = connect(Number(port), hostname)
      // Refused with a reset or a plain close, depending on timing: either will do.
      refused.on("error", () => {})
      const closed = new Promise((resolve) => refused.on("close", resolve))
      refused.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`)
      const received: Array<Buffer> = []
      refused.on("data", (chunk: Buffer) => received.push(chunk))
      await closed
      assert.equal(Buffer.concat(received).length, 0, "the fourth connection was answered")
      for (const socket of open) socket.destroy()
      // The server sees the closes on its own time; until then it may still refuse.
      const deadline = Date.now() + 5_000
      let health = await sendTo(server.origin, "/healthz").catch(() => undefined)
      while (health?.status !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        health = await sendTo(server.origin, "/healthz").catch(() => undefined)
      }
      assert.equal(health?.status, 200)
    })

    it("applies PETSTORE_RATE_LIMIT per key", async () => {
      for (const remaining of [1, 0]) {
        const answer = await sendTo(server.origin, "/v1/pets", withKey)
        assert.equal(answer.status, 200)
        assert.equal(answer.headers["ratelimit-policy"], '"per-key";q=2;w=60')
        assert.equal(answer.headers["ratelimit"], `"per-key";r=${remaining};t=30`)
      }
      const refused = await sendTo(server.origin, "/v1/pets", withKey)
      assertErrorAnswer(refused, 429, "rate_limited")
      assert.equal(refused.headers["retry-after"], "30")
    })

    it("applies PETSTORE_AUTH_FAILURE_LIMIT per client address", async () => {
      const wrongKey = { headers: { Authorization: "Bearer wrong" }, from: "127.0.0.9" }
      for (let i = 0; i < 2; i++) {
        assertErrorAnswer(await sendTo(server.origin, "/v1/pets", wrongKey), 401, "unauthorized")
      }
      assertErrorAnswer(await sendTo(server.origin, "/v1/pets", wrongKey), 429, "rate_limited")
    })

    it("answers CORS preflights from PETSTORE_CORS_ORIGINS", async () => {
      const answer = await sendTo(server.origin, "/v1/pets", {
        method: "OPTIONS",
        headers: { Origin: corsOrigin, "Access-Control-Request-Method": "POST" },
      })
      assert.equal(answer.status, 204)
      assert.equal(answer.headers["access-control-allow-origin"], corsOrigin)
    })
  },
)
