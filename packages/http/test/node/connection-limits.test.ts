import assert from "node:assert/strict"
import { after, afterEach, before, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import {
  assertRefusedAtAccept,
  assertServed,
  holdConnection,
  tryHealthz,
} from "@petstore/test-support/connections"
import type { RawConnection } from "@petstore/test-support/raw-connection"
import { sampleValue, scrape } from "@petstore/test-support/prometheus-text"
import { startEdgeServer, type EdgeServer } from "../harness/edge-server.js"

/**
 * One address cannot hold all the connections: past `PETSTORE_MAX_CONNECTIONS_PER_ADDRESS` its
 * new connections are refused at accept while other addresses and trusted proxies are served,
 * and every connection refused at accept (for that bound or for `PETSTORE_MAX_CONNECTIONS`) is
 * logged and counted.
 */

const limit = { timeout: 15_000 }

/** Waits until the server has seen connections close, down to `count` open. */
const openConnectionsDownTo = async (server: EdgeServer, count: number) => {
  const until = performance.now() + 2_000
  const open = () =>
    new Promise<number>((resolve, reject) =>
      server.server.getConnections((error, open) => (error ? reject(error) : resolve(open))),
    )
  while ((await open()) > count) {
    assert.ok(performance.now() < until, "the server still counts a closed connection")
    await sleep(10)
  }
}

describe("connections per address", () => {
  let server: EdgeServer
  const held: Array<RawConnection> = []
  before(async () => {
    server = await startEdgeServer(
      { maxConnectionsPerAddress: 3 },
      { isTrustedProxy: (peer) => peer === "127.0.0.9" },
    )
  })
  afterEach(() => held.splice(0).forEach((connection) => connection.socket.destroy()))
  after(() => server.close())

  it(
    "refuses at accept the connections past the bound from one address, and serves others",
    limit,
    async () => {
      for (let count = 0; count < 3; count++) {
        held.push(await holdConnection(server.origin, "127.0.0.2"))
      }
      assertRefusedAtAccept(await tryHealthz(server.origin, "127.0.0.2"))
      assertServed(await tryHealthz(server.origin, "127.0.0.3"))
      held.shift()?.socket.destroy()
      await openConnectionsDownTo(server, 2)
      assertServed(await tryHealthz(server.origin, "127.0.0.2"))
    },
  )

  it("logs and counts each refusal with the address", limit, async () => {
    const lines = server.refusals().filter((line) => line["reason"] === "address_connection_limit")
    assert.equal(lines.length, 1)
    const [line] = lines
    assert.equal(line?.["level"], "info")
    assert.equal(line?.["address"], "127.0.0.2")
    assert.equal(line?.["status"], undefined)
    assert.match(String(line?.["requestId"]), /^[0-9a-f-]{36}$/)
    const samples = await scrape(server.origin)
    assert.equal(
      sampleValue(samples, "petstore_http_refusals_total", {
        status: "none",
        reason: "address_connection_limit",
      }),
      1,
    )
  })

  it("does not count a trusted proxy's connections", limit, async () => {
    for (let count = 0; count < 5; count++) {
      held.push(await holdConnection(server.origin, "127.0.0.9"))
    }
    assertServed(await tryHealthz(server.origin, "127.0.0.9"))
  })
})

describe("connections over PETSTORE_MAX_CONNECTIONS", () => {
  let server: EdgeServer
  before(async () => {
    server = await startEdgeServer({ maxConnections: 2, maxConnectionsPerAddress: undefined })
  })
  after(() => server.close())

  it("are refused at accept, logged with the address and counted", limit, async () => {
    const held = [
      await holdConnection(server.origin, "127.0.0.2"),
      await holdConnection(server.origin, "127.0.0.3"),
    ]
    assertRefusedAtAccept(await tryHealthz(server.origin, "127.0.0.4"))
    held.forEach((connection) => connection.socket.destroy())
    await openConnectionsDownTo(server, 0)
    const [line] = server.refusals().filter((line) => line["reason"] === "connection_limit")
    assert.equal(line?.["level"], "info")
    assert.equal(line?.["address"], "127.0.0.4")
    assert.match(String(line?.["requestId"]), /^[0-9a-f-]{36}$/)
    assertServed(await tryHealthz(server.origin, "127.0.0.1"))
    const samples = await scrape(server.origin)
    assert.equal(
      sampleValue(samples, "petstore_http_refusals_total", {
        status: "none",
        reason: "connection_limit",
      }),
      1,
    )
  })
})
