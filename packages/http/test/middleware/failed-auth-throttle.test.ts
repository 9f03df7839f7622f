import assert from "node:assert/strict"
import { IncomingMessage } from "node:http"
import { Socket } from "node:net"
import { after, before, describe, it } from "node:test"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import type { SendOptions } from "@petstore/test-support/requests"
import { anyPeerIsProxy, clientAddress, noTrustedProxy, trustedProxies } from "../../src/index.js"
import { generateApiKey, type RefusalScope } from "../../src/index.js"
import { apiKey } from "../harness/server.js"
import { manualClock, startLimitedServer, type LimitedServer } from "../harness/limited-server.js"

/** 3 failures a minute: a token back every 20 s. */
const budget = { capacity: 3, windowSeconds: 60 }

const withToken = (token: string, options: SendOptions = {}): SendOptions => ({
  ...options,
  headers: { ...options.headers, Authorization: `Bearer ${token}` },
})
const badKey = (options: SendOptions = {}) => withToken("wrong-key", options)
const goodKey = (options: SendOptions = {}) => withToken(apiKey, options)

/** Wrong keys of every kind a client sends: garbage, near misses, and well-formed stored keys. */
const wrongTokens = (count: number): ReadonlyArray<string> =>
  Array.from(
    { length: count },
    (_, i) =>
      [`garbage-${i}`, `${apiKey}${i}`, generateApiKey(), `pst_${"x".repeat(i % 60)}`][i % 4] ?? "",
  )

describe("wrong keys per client address (PETSTORE_AUTH_FAILURE_LIMIT=3/min)", () => {
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

  it("answers the first wrong keys 401, then 429 with Retry-After — and a valid key still 200", async () => {
    const from = "127.0.0.2"
    for (let i = 0; i < 3; i++) {
      assertErrorAnswer(await server.send("/v1/pets", badKey({ from })), 401, "unauthorized")
    }
    const throttled = await server.send("/v1/pets", badKey({ from }))
    assertErrorAnswer(throttled, 429, "rate_limited")
    assert.equal(throttled.headers["retry-after"], "20")
    assert.equal(throttled.headers["www-authenticate"], undefined)
    // Others' failures, or its own, never refuse a valid key.
    assert.equal((await server.send("/v1/pets", goodKey({ from }))).status, 200)
    // Unknown paths are behind the same check.
    assertErrorAnswer(await server.send("/v1/nowhere", badKey({ from })), 429, "rate_limited")
    assert.equal((await server.send("/v1/nowhere", goodKey({ from }))).status, 404)
    assert.deepEqual(refusals, ["address", "address"])
  })

  it("serves 30 valid requests after 60 wrong keys of every kind from the same address", async () => {
    const from = "127.0.0.20"
    const wrong = await Promise.all(
      wrongTokens(60).map((token) => server.send("/v1/pets", withToken(token, { from }))),
    )
    assert.deepEqual(
      [...new Set(wrong.map((answer) => answer.status))].sort(),
      [401, 429],
      "the wrong keys are refused, past the budget with 429",
    )
    for (let i = 0; i < 30; i++) {
      const answer = await server.send("/v1/pets", goodKey({ from }))
      assert.equal(answer.status, 200, `valid request ${i + 1}: ${answer.body}`)
    }
  })

  it("serves every valid request interleaved with wrong ones", async () => {
    const from = "127.0.0.21"
    for (const [i, token] of wrongTokens(40).entries()) {
      const wrong = await server.send("/v1/pets", withToken(token, { from }))
      assert.equal(wrong.status, i < 3 ? 401 : 429, `wrong key ${i + 1}`)
      const valid = await server.send("/v1/pets", goodKey({ from }))
      assert.equal(valid.status, 200, `valid request ${i + 1}: ${valid.body}`)
    }
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
    assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 429)
    clock.advance(20_000)
    assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 401)
    assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 429)
  })

  it("does not count requests that sent no credentials at all", async () => {
    const from = "127.0.0.10"
    for (let i = 0; i < 10; i++) {
      assertErrorAnswer(await server.send("/v1/pets", { from }), 401, "unauthorized")
    }
    assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 401)
  })

  it("does not count credentials that guess nothing: an empty or malformed token, another scheme, two headers", async () => {
    const from = "127.0.0.11"
    const guessNothing = [
      "Bearer ",
      "Bearer",
      "bearer    ",
      "Basic dXNlcjpwYXNz",
      "Bearer a b",
      "Bearer {}",
    ]
    for (let i = 0; i < 5; i++) {
      for (const authorization of guessNothing) {
        const answer = await server.send("/v1/pets", {
          from,
          headers: { Authorization: authorization },
        })
        assertErrorAnswer(answer, 401, "unauthorized")
      }
      const twice = { Authorization: [`Bearer guess-${i}`, `Bearer other-${i}`] }
      const answer = await server.send("/v1/pets", { from, headers: twice })
      assertErrorAnswer(answer, 401, "unauthorized")
    }
    // The budget is whole: three real guesses are still answered 401.
    for (let i = 0; i < 3; i++) {
      assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 401)
    }
  })

  it("counts only failures: successful requests spend nothing", async () => {
    const from = "127.0.0.6"
    for (let i = 0; i < 20; i++) await server.send("/v1/pets", goodKey({ from }))
    for (let i = 0; i < 3; i++) {
      assert.equal((await server.send("/v1/pets", badKey({ from }))).status, 401)
    }
  })

  it("does not believe X-Forwarded-For when no proxy is trusted", async () => {
    const from = "127.0.0.7"
    for (let i = 0; i < 6; i++) {
      const spoofed = { "X-Forwarded-For": `203.0.113.${i}, 198.51.100.${i}` }
      const answer = await server.send("/v1/pets", badKey({ from, headers: spoofed }))
      assert.equal(answer.status, i < 3 ? 401 : 429)
    }
  })
})

describe("X-Forwarded-For from the proxies the operator names (PETSTORE_TRUST_PROXY=127.0.0.1)", () => {
  const clock = manualClock()
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({
      limits: {
        failedAuthPerAddress: budget,
        trustedProxies: trustedProxies(["127.0.0.1"]),
        clock: clock.now,
      },
    })
  })
  after(() => server.close())

  const failFrom = (forwardedFor: string | ReadonlyArray<string>, from = "127.0.0.1") =>
    server.send("/v1/pets", badKey({ from, headers: { "X-Forwarded-For": forwardedFor } }))

  it("counts the right-most entry the proxy appended, whatever the client wrote to its left", async () => {
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

  it("ignores the header from a peer that is not a named proxy: rotating it buys nothing", async () => {
    const from = "127.0.0.30"
    const answers = []
    for (let i = 0; i < 100; i++) answers.push((await failFrom(`198.51.100.${i}`, from)).status)
    assert.deepEqual(answers.slice(0, 3), [401, 401, 401])
    assert.ok(answers.slice(3).every((status) => status === 429))
  })

  it("lets no client lock out another by spoofing its address", async () => {
    const victim = "127.0.0.31"
    for (let i = 0; i < 20; i++) await failFrom(victim, "127.0.0.32")
    assert.equal((await server.send("/v1/pets", badKey({ from: victim }))).status, 401)
  })

  it("spells one address one way: ports, brackets, IPv4-mapped IPv6 and zone ids", async () => {
    for (const spelling of ["192.0.2.50:8080", "::ffff:192.0.2.50", "[::ffff:c000:232]:443"]) {
      assert.equal((await failFrom(spelling)).status, 401, spelling)
    }
    assert.equal((await failFrom("192.0.2.50")).status, 429)
    for (const spelling of ["fe80::1%eth0", "[fe80::2]", "fe80::3%eth1"]) {
      assert.equal((await failFrom(spelling)).status, 401, spelling)
    }
    assert.equal((await failFrom("fe80::4")).status, 429, "one /64 is one client")
  })

  it("takes an entry that is no address as its sender's claim, never as the proxy's address", async () => {
    for (let i = 0; i < 4; i++) await failFrom("010.0.7.5")
    assert.equal((await failFrom("010.0.7.5")).status, 429)
    for (let i = 0; i < 4; i++) await failFrom("192.0.2.60, ")
    assert.equal((await failFrom("192.0.2.60,")).status, 429)
    // Neither claim spent the proxy's own budget: its other clients are untouched.
    assert.equal((await failFrom("192.0.2.61")).status, 401)
    assert.equal((await server.send("/v1/pets", badKey({ from: "127.0.0.1" }))).status, 401)
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
    const address = (peer: string) => clientAddress(requestFrom(peer), noTrustedProxy)
    assert.equal(address("::ffff:192.0.2.7"), "192.0.2.7")
    assert.equal(address("::ffff:a00:605"), "10.0.6.5")
    assert.equal(address("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64")
    assert.equal(address("2001:db8:1:2::9"), "2001:db8:1:2::/64")
    assert.equal(address("2001:DB8::1"), "2001:db8:0:0::/64")
    assert.equal(address("fe80::1%eth0"), "fe80:0:0:0::/64")
    assert.equal(address("::1"), "0:0:0:0::/64")
  })

  it("reads X-Forwarded-For only through trusted hops", () => {
    const request = requestFrom("10.0.0.1", "198.51.100.1, 10.0.0.2, 2001:db8:aa:bb::1")
    assert.equal(clientAddress(request, noTrustedProxy), "10.0.0.1")
    assert.equal(clientAddress(request, anyPeerIsProxy), "2001:db8:aa:bb::/64")
    assert.equal(clientAddress(request, trustedProxies(["10.0.0.0/8"])), "2001:db8:aa:bb::/64")
    const twoHops = requestFrom("10.0.0.1", "198.51.100.1, 10.0.0.2")
    assert.equal(clientAddress(twoHops, trustedProxies(["10.0.0.0/8"])), "198.51.100.1")
    assert.equal(clientAddress(twoHops, trustedProxies(["10.0.0.1"])), "10.0.0.2")
    assert.equal(clientAddress(twoHops, trustedProxies(["192.0.2.1"])), "10.0.0.1")
  })
})
