import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import type { Answer } from "@petstore/test-support/requests"
import { startLimitedServer, type LimitedServer } from "../harness/limited-server.js"

const allowed = "https://app.example.com"
const disallowed = "https://evil.example.net"

const preflight = (origin: string, method = "POST") => ({
  method: "OPTIONS",
  headers: {
    Origin: origin,
    "Access-Control-Request-Method": method,
    "Access-Control-Request-Headers": "authorization,content-type,idempotency-key",
  },
})

const listOf = (answer: Answer, header: string) =>
  String(answer.headers[header] ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())

const assertNoCors = (answer: Answer) => {
  for (const header of Object.keys(answer.headers)) {
    assert.doesNotMatch(header, /^access-control-/, `${answer.status} has ${header}`)
  }
}

describe("CORS (PETSTORE_CORS_ORIGINS=https://app.example.com)", () => {
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({
      corsOrigins: [allowed, "http://localhost:3000"],
      limits: { perKey: { capacity: 100, windowSeconds: 1 } },
    })
  })
  after(() => server.close())

  it("answers a preflight for an operation path without a key", async () => {
    for (const path of ["/v1/pets", "/v1/pets/1"]) {
      const answer = await server.send(path, preflight(allowed))
      assert.equal(answer.status, 204, path)
      assert.equal(answer.headers["access-control-allow-origin"], allowed)
      assert.ok(listOf(answer, "access-control-allow-methods").includes("post"))
      assert.ok(listOf(answer, "access-control-allow-methods").includes("get"))
      const headers = listOf(answer, "access-control-allow-headers")
      for (const header of ["authorization", "content-type", "idempotency-key", "x-request-id"]) {
        assert.ok(headers.includes(header), header)
      }
      assert.equal(answer.headers["access-control-allow-credentials"], undefined)
      assert.match(answer.headers["access-control-max-age"] ?? "", /^[1-9][0-9]*$/)
    }
  })

  it("lets an allowed origin read answers and the headers a client needs", async () => {
    const answers = [
      await server.withKey("/pets", { headers: { Origin: allowed } }),
      await server.withKey("/nowhere", { headers: { Origin: allowed } }),
      await server.send("/v1/pets", { headers: { Origin: allowed } }),
    ]
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 404, 401],
    )
    for (const answer of answers) {
      assert.equal(answer.headers["access-control-allow-origin"], allowed)
      assert.ok(listOf(answer, "vary").includes("origin"))
      const exposed = listOf(answer, "access-control-expose-headers")
      for (const header of [
        "ratelimit",
        "ratelimit-policy",
        "retry-after",
        "x-request-id",
        "idempotent-replayed",
        "location",
        "link",
        "deprecation",
        "sunset",
      ]) {
        assert.ok(exposed.includes(header), header)
      }
    }
  })

  it("lets nothing that only looks like a preflight past the key check", async () => {
    const before = JSON.parse((await server.withKey("/pets?limit=100")).body).length
    // The preflight's headers on a real create: a create, so it needs a key.
    const create = await server.send("/v1/pets", {
      method: "POST",
      headers: {
        ...preflight(allowed).headers,
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ name: "Rex", categoryId: 1 }),
    })
    assertErrorAnswer(create, 401, "unauthorized")
    // OPTIONS without Access-Control-Request-Method is no preflight: the router's, after the key.
    const plainOptions = await server.send("/v1/pets", {
      method: "OPTIONS",
      headers: { Origin: allowed },
    })
    assertErrorAnswer(plainOptions, 401, "unauthorized")
    // Origins compare exactly: another case is another origin.
    assertNoCors(await server.send("/v1/pets", preflight(allowed.toUpperCase())))
    const after = JSON.parse((await server.withKey("/pets?limit=100")).body).length
    assert.equal(after, before, "no pet was stored")
  })

  it("gives another origin no CORS header, preflight or not", async () => {
    const refusedPreflight = await server.send("/v1/pets", preflight(disallowed))
    assertNoCors(refusedPreflight)
    assert.equal(
      refusedPreflight.status,
      401,
      "a preflight it does not allow goes to the key check",
    )
    const answer = await server.withKey("/pets", { headers: { Origin: disallowed } })
    assert.equal(answer.status, 200)
    assertNoCors(answer)
    assertNoCors(await server.withKey("/pets", { headers: { Origin: `${allowed}.evil.net` } }))
    assertNoCors(await server.withKey("/pets", { headers: { Origin: "null" } }))
  })

  it("matches origins exactly: another scheme or port is another origin", async () => {
    assertNoCors(await server.send("/v1/pets", preflight("http://app.example.com")))
    assertNoCors(await server.send("/v1/pets", preflight("http://localhost:3001")))
    const local = await server.send("/v1/pets", preflight("http://localhost:3000"))
    assert.equal(local.headers["access-control-allow-origin"], "http://localhost:3000")
  })
})

describe("CORS for any origin (PETSTORE_CORS_ORIGINS=*)", () => {
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer({ corsOrigins: "*" })
  })
  after(() => server.close())

  it("allows every origin with *, never with credentials", async () => {
    const answer = await server.send("/v1/pets", preflight(disallowed, "GET"))
    assert.equal(answer.status, 204)
    assert.equal(answer.headers["access-control-allow-origin"], "*")
    assert.equal(answer.headers["access-control-allow-credentials"], undefined)
  })
})

describe("CORS off (PETSTORE_CORS_ORIGINS unset)", () => {
  let server: LimitedServer
  before(async () => {
    server = await startLimitedServer()
  })
  after(() => server.close())

  it("answers no preflight and sends no CORS header", async () => {
    const answer = await server.send("/v1/pets", preflight(allowed))
    assert.equal(answer.status, 401)
    assertNoCors(answer)
    assertNoCors(await server.withKey("/pets", { headers: { Origin: allowed } }))
  })
})
