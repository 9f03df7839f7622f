import assert from "node:assert/strict"
import { after, afterEach, before, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { Either, Option } from "effect"
import { readConfig } from "../src/config.js"
import { defaultConnectionLimits } from "@petstore/http/node"
import { openRaw, startEdgeServer, type EdgeServer, type RawConnection } from "./edge-harness.js"
import { exchange, type RawOutcome } from "./raw-exchange.js"
import { parseLogLine } from "./log-capture.js"
import { sampleValue, scrape } from "./prometheus-text.js"
import { processTestTimeout, startServerProcess } from "./server-process.js"

/**
 * One address cannot hold all the connections: past `PETSTORE_MAX_CONNECTIONS_PER_ADDRESS` its
 * new connections are refused at accept while other addresses and trusted proxies are served,
 * and every connection refused at accept (for that bound or for `PETSTORE_MAX_CONNECTIONS`) is
 * logged and counted.
 */

const limit = { timeout: 15_000 }

const healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

/** A connection from `from` that has been answered once and is kept open (keep-alive). */
const holdConnection = async (origin: string, from: string): Promise<RawConnection> => {
  const connection = await openRaw(origin, { from })
  connection.socket.write(healthz)
  assert.equal((await connection.answer()).status, 200)
  return connection
}

const tryHealthz = (origin: string, from: string): Promise<RawOutcome> =>
  exchange(origin, `${healthz.slice(0, -2)}Connection: close\r\n\r\n`, {
    head: false,
    timeoutMs: 2_000,
    from,
  })

const assertRefusedAtAccept = (outcome: RawOutcome) => {
  assert.equal(outcome.kind, "closed", JSON.stringify(outcome))
  assert.equal(outcome.kind === "closed" ? outcome.received : undefined, "")
}

const assertServed = (outcome: RawOutcome) => {
  assert.equal(outcome.kind, "answered", JSON.stringify(outcome))
  assert.equal(outcome.kind === "answered" ? outcome.response.status : undefined, 200)
}

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

describe("the server process", () => {
  it(
    "bounds connections per address by PETSTORE_MAX_CONNECTIONS_PER_ADDRESS, logging and counting refusals",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({
        storage: "memory",
        env: { PETSTORE_MAX_CONNECTIONS_PER_ADDRESS: "2" },
      })
      const held: Array<RawConnection> = []
      try {
        held.push(await holdConnection(server.origin, "127.0.0.2"))
        held.push(await holdConnection(server.origin, "127.0.0.2"))
        assertRefusedAtAccept(await tryHealthz(server.origin, "127.0.0.2"))
        assertServed(await tryHealthz(server.origin, "127.0.0.3"))
        const refusals = () =>
          server
            .stdout()
            .split("\n")
            .filter((line) => line.includes('"refused"'))
            .map(parseLogLine)
        const until = performance.now() + 2_000
        while (refusals().length === 0 && performance.now() < until) await sleep(20)
        assert.deepEqual(
          refusals().map((line) => [line["level"], line["reason"], line["address"]]),
          [["info", "address_connection_limit", "127.0.0.2"]],
        )
        const samples = await scrape(server.origin)
        assert.equal(
          sampleValue(samples, "petstore_http_refusals_total", {
            status: "none",
            reason: "address_connection_limit",
          }),
          1,
        )
      } finally {
        held.forEach((connection) => connection.socket.destroy())
        await server.stop()
      }
    },
  )
})

describe("the per-address bound exempts only the proxies PETSTORE_TRUST_PROXY names", () => {
  const served = async (env: Readonly<Record<string, string>>, from: string) => {
    const server = await startServerProcess({
      storage: "memory",
      env: { PETSTORE_MAX_CONNECTIONS_PER_ADDRESS: "2", ...env },
    })
    const held: Array<RawConnection> = []
    try {
      held.push(await holdConnection(server.origin, from))
      held.push(await holdConnection(server.origin, from))
      return (await tryHealthz(server.origin, from)).kind === "answered"
    } finally {
      held.forEach((connection) => connection.socket.destroy())
      await server.stop()
    }
  }

  it(
    "true: every peer is still bounded, since any of them may be a client",
    { timeout: processTestTimeout },
    async () => {
      assert.equal(await served({ PETSTORE_TRUST_PROXY: "true" }, "127.0.0.2"), false)
    },
  )

  it("a named proxy is exempt; another peer is not", { timeout: processTestTimeout }, async () => {
    assert.equal(await served({ PETSTORE_TRUST_PROXY: "127.0.0.9" }, "127.0.0.9"), true)
    assert.equal(await served({ PETSTORE_TRUST_PROXY: "127.0.0.9" }, "127.0.0.2"), false)
  })
})

describe("PETSTORE_MAX_CONNECTIONS_PER_ADDRESS", () => {
  const read = (value?: string) =>
    readConfig(value === undefined ? {} : { PETSTORE_MAX_CONNECTIONS_PER_ADDRESS: value }).pipe(
      Either.map((config) => config.maxConnectionsPerAddress),
    )

  it("is 512 unless set, as the server's default limits are", () => {
    assert.deepEqual(read(), Either.right(Option.some(512)))
    assert.equal(defaultConnectionLimits.maxConnectionsPerAddress, 512)
  })

  it("is a positive integer or off", () => {
    assert.deepEqual(read("64"), Either.right(Option.some(64)))
    assert.deepEqual(read(" off "), Either.right(Option.none()))
    for (const text of ["0", "-1", "1.5", "many", "on", "1e3"]) {
      const problems = Either.getLeft(read(text)).pipe(Option.getOrElse(() => []))
      assert.match(problems.join("\n"), /PETSTORE_MAX_CONNECTIONS_PER_ADDRESS/, text)
    }
  })
})
