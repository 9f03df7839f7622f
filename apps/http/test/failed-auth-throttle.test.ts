import assert from "node:assert/strict"
import { IncomingMessage } from "node:http"
import { Socket } from "node:net"
import { after, before, describe, it } from "node:test"
import { clientAddress } from "../src/client-address.js"
import type { RefusalScope } from "../src/middleware/rate-limit.js"
import { apiKey } from "./harness.js"
import {
  assertErrorAnswer,
  manualClock,
  startLimitedServer,
  type LimitedServer,
  type SendOptions,
} from "./limits-harness.js"

/** 3 failures a minute: a token back every 20 s. */
const budget = { capacity: 3, windowSeconds: 60 }

const badKey = (options: SendOptions = {}): SendOptions => ({
  ...options,
  headers: { ...options.headers, Authorization: "Bearer wrong-key" },
})
const goodKey = (options: SendOptions = {}): SendOptions => ({
  ...options,
  headers: { ...options.headers, Authorization: `Bearer ${apiKey}` },
})

describe("failed-auth throttle by socket address (PETSTORE_AUTH_FAILURE_LIMIT=3/min)", () => {
  const clock = manualClock()
  const refusals: Array<RefusalScope> = []
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({
      limits: {
        failedAuthPerAddress: budget,
        clock: clock.now,
        onRefusal: (scope) => refusals.push(scope),
      },
    })
  })
  after(() => server.close())

  it("answers the first failures 401, then 429 with Retry-After even to a valid key", async () => {
    const from = "127.0.0.2"
    for (let i = 0; i < 3; i++) {
      const answer = await server.send("/v1/pets", badKey({ from }))
      assertErrorAnswer(answer, 401, "unauthorized")
    }
    const throttled = await server.send("/v1/pets", badKey({ from }))
    assertErrorAnswer(throttled, 429, "rate_limited")
    assert.equal(throttled.headers["retry-after"], "20")
    assert.equal(throttled.headers["www-authenticate"], undefined)
    // The key is not even checked: a right guess gets the same answer as a wrong one.
    const guessedRight = await server.send("/v1/pets", goodKey({ from }))
    assertErrorAnswer(guessedRight, 429, "rate_limited")
    // Unknown paths are behind the key check too.
    assertErrorAnswer(await server.send("/v1/nowhere", { from }), 429, "rate_limited")
    assert.deepEqual(refusals, ["address", "address", "address"])
  })

  it("leaves other addresses alone", async () => {
    for (let i = 0; i < 5; i++) await server.send("/v1/pets", badKey({ from: "127.0.0.3" }))
    assert.equal((await server.send("/v1/pets", badKey({ from: "127.0.0.3" }))).status, 429)
    assert.equal((await server.send("/v1/pets", goodKey({ from: "127.0.0.4" }))).status, 200)
    assert.equal((await server.send("/v1/pets", badKey({ from: "127.0.0.4" }))).status, 401)
  })

  it("gives one failure back per 20 s", async () => {
    const from = "127.0.0.5"
    for (let i = 0; i < 3; i++) await server.send("/v1/pets", badKey({ from }))
    assert.equal((await server.send("/v1/pets", goodKey({ from }))).status, 429)
    clock.advance(20_000)
    assert.equal((await server.send("/v1/pets", goodKey({ from }))).status, 200)
    assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 401)
    assert.equal((await server.send("/v1/pets", goodKey({ from }))).status, 429)
  })

  it("does not count requests that sent no credentials at all", async () => {
    const from = "127.0.0.10"
    for (let i = 0; i < 10; i++) {
      assertErrorAnswer(await server.send("/v1/pets", { from }), 401, "unauthorized")
    }
    assert.equal((await server.send("/v1/pets", goodKey({ from }))).status, 200)
  })

  it("counts only failures: successful requests spend nothing", async () => {
    const from = "127.0.0.6"
    for (let i = 0; i < 20; i++) await server.send("/v1/pets", goodKey({ from }))
    for (let i = 0; i < 3; i++) {
      assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 401)
    }
  })

  it("does not believe X-Forwarded-For when the proxy is not trusted", async () => {
    const from = "127.0.0.7"
    for (let i = 0; i < 6; i++) {
      const spoofed = { "X-Forwarded-For": `203.0.113.${i}, 198.51.100.${i}` }
      const answer = await server.send("/v1/pets", badKey({ from, headers: spoofed }))
      assert.equal(answer.status, i < 3 ? 401 : 429)
    }
  })
})

describe("failed-auth throttle behind a trusted proxy (PETSTORE_TRUST_PROXY=true)", () => {
  const clock = manualClock()
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({
      limits: { failedAuthPerAddress: budget, trustProxy: true, clock: clock.now },
    })
  })
  after(() => server.close())

  const failFrom = (forwardedFor: string | ReadonlyArray<string>) =>
    server.send("/v1/pets", badKey({ headers: { "X-Forwarded-For": forwardedFor } }))

  it("counts the right-most X-Forwarded-For entry, whatever the client wrote to its left", async () => {
    for (let i = 0; i < 3; i++) assert.equal((await failFrom(`10.9.9.${i}, 192.0.2.1`)).status, 401)
    assert.equal((await failFrom("192.0.2.1")).status, 429)
    assert.equal((await failFrom("spoofed, 10.1.1.1 ,192.0.2.1")).status, 429)
    // Another client behind the same proxy is another address.
    assert.equal((await failFrom("192.0.2.1, 192.0.2.2")).status, 401)
  })

  it("reads several X-Forwarded-For headers as one list, in order", async () => {
    for (let i = 0; i < 3; i++) await failFrom(["192.0.2.10", "192.0.2.11"])
    assert.equal((await failFrom("192.0.2.11")).status, 429)
    assert.equal((await failFrom(["192.0.2.11", "192.0.2.10"])).status, 401)
  })

  it("falls back to the socket's address when the right-most entry is not an address", async () => {
    // Garbage cannot buy a fresh budget per request: it all counts as the proxy's address.
    for (let i = 0; i < 3; i++) assert.equal((await failFrom(`garbage-${i}`)).status, 401)
    for (const garbage of ["garbage-9", "", "192.0.2.1, ", "1.2.3.4:80", "[::1]", "999.1.1.1"]) {
      assert.equal((await failFrom(garbage)).status, 429, JSON.stringify(garbage))
    }
    assert.equal(
      (await server.send("/v1/pets", badKey({ from: "127.0.0.8" }))).status,
      401,
      "another socket address is another client",
    )
  })
})

describe("clientAddress", () => {
  const requestFrom = (remoteAddress: string, forwardedFor?: string): IncomingMessage => {
    const socket = new Socket()
    Object.defineProperty(socket, "remoteAddress", { value: remoteAddress })
    const request = new IncomingMessage(socket)
    if (forwardedFor !== undefined) request.headers["x-forwarded-for"] = forwardedFor
    return request
  }

  it("spells one client one way: IPv4-mapped IPv6 as IPv4, IPv6 by its /64", () => {
    const untrusted = { trustProxy: false }
    assert.equal(clientAddress(requestFrom("::ffff:192.0.2.7"), untrusted), "192.0.2.7")
    assert.equal(clientAddress(requestFrom("2001:db8:1:2:3:4:5:6"), untrusted), "2001:db8:1:2::/64")
    assert.equal(clientAddress(requestFrom("2001:db8:1:2::9"), untrusted), "2001:db8:1:2::/64")
    assert.equal(clientAddress(requestFrom("2001:DB8::1"), untrusted), "2001:db8:0:0::/64")
    assert.equal(clientAddress(requestFrom("::1"), untrusted), "0:0:0:0::/64")
  })

  it("reads X-Forwarded-For only when the proxy is trusted", () => {
    const request = requestFrom("10.0.0.1", "198.51.100.1, 2001:db8:aa:bb::1")
    assert.equal(clientAddress(request, { trustProxy: false }), "10.0.0.1")
    assert.equal(clientAddress(request, { trustProxy: true }), "2001:db8:aa:bb::/64")
  })
})
