import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { Either, Option } from "effect"
import { defaultConnectionLimits } from "@petstore/http/node"
import {
  assertRefusedAtAccept,
  assertServed,
  holdConnection,
  tryHealthz,
} from "@petstore/test-support/connections"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { sampleValue, scrape } from "@petstore/test-support/prometheus-text"
import type { RawConnection } from "@petstore/test-support/raw-connection"
import { readConfig } from "../src/settings/read-config.js"
import { processTestTimeout, startServerProcess } from "./server-process.js"

/**
 * The process bounds connections per address as `PETSTORE_MAX_CONNECTIONS_PER_ADDRESS` and
 * `PETSTORE_TRUST_PROXY` say (the bound itself is tested with the server, in @petstore/http).
 */

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
