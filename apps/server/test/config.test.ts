import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { resolve } from "node:path"
import { Duration, Either, Option } from "effect"
import { readConfig } from "../src/settings/read-config.js"
import { settings } from "../src/settings/settings.js"

const problemsOf = (env: Record<string, string>) =>
  Either.match(readConfig(env), { onLeft: (problems) => problems.join("\n"), onRight: () => "" })

describe("readConfig", () => {
  it("defaults to 127.0.0.1:8080 under /v1 with no keys", () => {
    const config = Either.getOrThrow(readConfig({ PETSTORE_STORAGE: "memory" }))
    assert.equal(config.host, "127.0.0.1")
    assert.equal(config.port, 8080)
    assert.equal(config.basePath, "/v1")
    assert.deepEqual(config.apiKeys, [])
  })

  it("reads PORT, HOST, PETSTORE_BASE_PATH and comma-separated PETSTORE_API_KEYS", () => {
    const config = Either.getOrThrow(
      readConfig({
        PORT: "9000",
        HOST: "0.0.0.0",
        PETSTORE_BASE_PATH: "/api/v1/",
        PETSTORE_API_KEYS: " one , two,,three ",
        PETSTORE_STORAGE: "memory",
      }),
    )
    assert.equal(config.port, 9000)
    assert.equal(config.host, "0.0.0.0")
    assert.equal(config.basePath, "/api/v1")
    assert.deepEqual(config.apiKeys, ["one", "two", "three"])
  })

  it("names every invalid setting at once", () => {
    const problems = problemsOf({
      PORT: "http",
      PETSTORE_BASE_PATH: "v1",
      PETSTORE_API_KEYS: "good,has space",
      PETSTORE_STORAGE: "floppy",
    })
    assert.match(problems, /PORT/)
    assert.match(problems, /PETSTORE_BASE_PATH/)
    assert.match(
      problems,
      /^PETSTORE_API_KEYS must be .*; key 2 has characters a bearer token cannot carry$/m,
    )
    // A key is a secret: the refusal says which one, never what it holds.
    assert.doesNotMatch(problems, /has space/)
    assert.match(problems, /PETSTORE_STORAGE/)
  })

  it("names problems of the server URLs together with the others", () => {
    const problems = problemsOf({
      PORT: "http",
      PETSTORE_PUBLIC_URL: "https://pets.example.com/v2",
      PETSTORE_STAGING_URL: "https://staging.example.com/v3",
    })
    assert.deepEqual(
      problems.split("\n").map((problem) => problem.split(" ")[0]),
      ["PORT", "PETSTORE_PUBLIC_URL", "PETSTORE_STAGING_URL"],
    )
  })

  it("keeps pets in ./data/petstore.db by default", () => {
    const config = Either.getOrThrow(readConfig({}))
    assert.deepEqual(config.storage, { kind: "sqlite", filename: resolve("data/petstore.db") })
  })

  it("reads only the record it is given, never process.env", () => {
    const saved = process.env["PORT"]
    process.env["PORT"] = "not a port"
    try {
      assert.equal(Either.getOrThrow(readConfig({})).port, 8080)
    } finally {
      if (saved === undefined) delete process.env["PORT"]
      else process.env["PORT"] = saved
    }
  })

  it("takes an empty variable as unset", () => {
    const config = Either.getOrThrow(
      readConfig({ PORT: "", HOST: "", PETSTORE_BASE_PATH: "", PETSTORE_PUBLIC_URL: "" }),
    )
    assert.equal(config.port, 8080)
    assert.equal(config.host, "127.0.0.1")
    assert.equal(config.basePath, "/v1")
    assert.ok(Option.isNone(config.publicUrl))
  })

  it("applies each documented default value as if the variable held it", () => {
    const defaults = Either.getOrThrow(readConfig({}))
    const documented = Object.values(settings).flatMap((setting) =>
      "value" in setting.default ? [[setting.variable, setting.default.value]] : [],
    )
    assert.ok(documented.length >= 4)
    for (const [variable, value] of documented) {
      assert.ok(variable !== undefined && value !== undefined)
      assert.deepEqual(Either.getOrThrow(readConfig({ [variable]: value })), defaults, variable)
    }
  })

  it("documents each setting once, with a description", () => {
    const variables = Object.values(settings).map((setting) => setting.variable)
    assert.deepEqual(new Set(variables).size, variables.length)
    assert.ok(Object.values(settings).every((setting) => setting.description !== ""))
  })

  it("reads PETSTORE_IDEMPOTENCY_TTL as a positive duration, 24 hours unless set", () => {
    const ttlOf = (env: Record<string, string>) =>
      Duration.toMillis(Either.getOrThrow(readConfig(env)).idempotencyTtl)
    assert.equal(ttlOf({}), 24 * 3_600_000)
    assert.equal(ttlOf({ PETSTORE_IDEMPOTENCY_TTL: "90min" }), 90 * 60_000)
    assert.equal(ttlOf({ PETSTORE_IDEMPOTENCY_TTL: "3600 seconds" }), 3_600_000)
    assert.match(problemsOf({ PETSTORE_IDEMPOTENCY_TTL: "0h" }), /PETSTORE_IDEMPOTENCY_TTL/)
    assert.match(problemsOf({ PETSTORE_IDEMPOTENCY_TTL: "soon" }), /PETSTORE_IDEMPOTENCY_TTL/)
  })

  it("refuses ports outside 0..65535", () => {
    assert.match(problemsOf({ PORT: "65536" }), /PORT/)
    assert.match(problemsOf({ PORT: "-1" }), /PORT/)
  })
})

describe("readConfig: abuse limits, CORS and connections", () => {
  const configOf = (env: Record<string, string>) => Either.getOrThrow(readConfig(env))

  it("limits each key to 1000/s and each address to 20 failed authentications a minute unless set", () => {
    const config = configOf({})
    assert.deepEqual(config.rateLimit, Option.some({ capacity: 1000, windowSeconds: 1 }))
    assert.deepEqual(config.authFailureLimit, Option.some({ capacity: 20, windowSeconds: 60 }))
    assert.equal(config.trustedProxies("127.0.0.1", 0), false)
    assert.ok(Option.isNone(config.redisUrl))
    assert.ok(Option.isNone(config.corsOrigins))
    assert.equal(config.maxConnections, 10_000)
  })

  it("reads PETSTORE_RATE_LIMIT and PETSTORE_AUTH_FAILURE_LIMIT as <n>/<s|min|h> or off", () => {
    assert.deepEqual(
      configOf({ PETSTORE_RATE_LIMIT: "5/s" }).rateLimit,
      Option.some({ capacity: 5, windowSeconds: 1 }),
    )
    assert.deepEqual(
      configOf({ PETSTORE_RATE_LIMIT: "600/min" }).rateLimit,
      Option.some({ capacity: 600, windowSeconds: 60 }),
    )
    assert.deepEqual(
      configOf({ PETSTORE_RATE_LIMIT: "1000000/s" }).rateLimit,
      Option.some({ capacity: 1_000_000, windowSeconds: 1 }),
    )
    assert.deepEqual(
      configOf({ PETSTORE_AUTH_FAILURE_LIMIT: "100/h" }).authFailureLimit,
      Option.some({ capacity: 100, windowSeconds: 3600 }),
    )
    assert.ok(Option.isNone(configOf({ PETSTORE_RATE_LIMIT: "off" }).rateLimit))
    assert.ok(Option.isNone(configOf({ PETSTORE_AUTH_FAILURE_LIMIT: "off" }).authFailureLimit))
    for (const text of ["0/s", "5", "5/d", "-1/s", "1.5/s", "five/s", "5/sec", "on"]) {
      assert.match(problemsOf({ PETSTORE_RATE_LIMIT: text }), /PETSTORE_RATE_LIMIT/, text)
      assert.match(
        problemsOf({ PETSTORE_AUTH_FAILURE_LIMIT: text }),
        /PETSTORE_AUTH_FAILURE_LIMIT/,
        text,
      )
    }
  })

  it("reads PETSTORE_TRUST_PROXY as the proxies' addresses and ranges, true or false", () => {
    const named = configOf({ PETSTORE_TRUST_PROXY: "10.0.0.7, 192.168.0.0/16,loopback" })
    for (const address of ["10.0.0.7", "192.168.44.1", "127.0.0.1", "::1", "::ffff:10.0.0.7"]) {
      assert.equal(named.trustedProxies(address, 0), true, address)
    }
    for (const address of ["10.0.0.8", "192.169.0.1", "203.0.113.9"]) {
      assert.equal(named.trustedProxies(address, 0), false, address)
    }
    const anyPeer = configOf({ PETSTORE_TRUST_PROXY: "true" }).trustedProxies
    assert.deepEqual([anyPeer("203.0.113.9", 0), anyPeer("203.0.113.9", 1)], [true, false])
    const none = configOf({ PETSTORE_TRUST_PROXY: "false" }).trustedProxies
    assert.equal(none("127.0.0.1", 0), false)
    for (const text of ["yes", "10.0.0.300", "10.0.0.0/33", "proxy.example.com", "10.0.0.1:80"]) {
      assert.match(problemsOf({ PETSTORE_TRUST_PROXY: text }), /PETSTORE_TRUST_PROXY/, text)
    }
  })

  it("never shows a secret of a URL-valued setting in a refusal, however the URL is mistyped", () => {
    const secret = "SECRETPW"
    const mistyped = [
      `redis//u:${secret}@h`,
      `redis://h:${secret}`,
      `postgress://app@h/pets?password=${secret}`,
      `http//u:${secret}@h/v1`,
      `u:${secret}@h`,
      `https://u:${secret}@h/v1`,
      `${secret} with spaces`,
    ]
    const tracingOn = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
    for (const variable of [
      "PETSTORE_STORAGE",
      "PETSTORE_REDIS_URL",
      "PETSTORE_PUBLIC_URL",
      "PETSTORE_STAGING_URL",
      "OTEL_EXPORTER_OTLP_ENDPOINT",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]) {
      for (const value of mistyped) {
        const problems = problemsOf({ ...tracingOn, PETSTORE_STORAGE: "memory", [variable]: value })
        // An OTLP endpoint may carry a user (the SDK sends it); it is never shown (see below).
        const accepted = variable.startsWith("OTEL_") && value.startsWith("https://")
        assert.match(
          problems,
          accepted ? /^$/ : new RegExp(`^${variable} `),
          `${variable}=${value}`,
        )
        assert.doesNotMatch(problems, new RegExp(secret), `${variable}=${value}`)
      }
    }
    // A plain word is shown, as it helps whoever mistyped it.
    assert.match(problemsOf({ PETSTORE_REDIS_URL: "localhost" }), /got "localhost"/)
  })

  it("reads PETSTORE_REDIS_URL as a redis:// or rediss:// URL", () => {
    const url = "redis://127.0.0.1:6379/2"
    assert.deepEqual(configOf({ PETSTORE_REDIS_URL: url }).redisUrl, Option.some(url))
    assert.ok(Option.isSome(configOf({ PETSTORE_REDIS_URL: "rediss://cache:6380" }).redisUrl))
    for (const text of ["127.0.0.1:6379", "http://127.0.0.1:6379", "redis://"]) {
      assert.match(problemsOf({ PETSTORE_REDIS_URL: text }), /PETSTORE_REDIS_URL/, text)
    }
  })

  it("reads PETSTORE_REDIS_PREFIX as up to 64 printable ASCII characters, petstore:limit: unless set", () => {
    assert.equal(configOf({}).redisPrefix, "petstore:limit:")
    assert.equal(configOf({ PETSTORE_REDIS_PREFIX: "" }).redisPrefix, "petstore:limit:")
    assert.equal(
      configOf({ PETSTORE_REDIS_PREFIX: "{eu-1}:limits:" }).redisPrefix,
      "{eu-1}:limits:",
    )
    assert.equal(configOf({ PETSTORE_REDIS_PREFIX: "p".repeat(64) }).redisPrefix, "p".repeat(64))
    for (const text of [
      "has space:",
      " ",
      "tab\t",
      "line\nbreak",
      "é:",
      "\u0000",
      "p".repeat(65),
    ]) {
      const problems = problemsOf({ PETSTORE_REDIS_PREFIX: text })
      assert.match(problems, /^PETSTORE_REDIS_PREFIX must be /, JSON.stringify(text))
      assert.equal(problems.split("\n").length, 1, JSON.stringify(text))
    }
  })

  it("reads PETSTORE_CORS_ORIGINS as exact origins or *", () => {
    assert.deepEqual(
      configOf({ PETSTORE_CORS_ORIGINS: " https://App.example.com , http://localhost:3000/ " })
        .corsOrigins,
      Option.some(["https://app.example.com", "http://localhost:3000"]),
    )
    assert.deepEqual(configOf({ PETSTORE_CORS_ORIGINS: "*" }).corsOrigins, Option.some("*"))
    for (const text of [
      "https://app.example.com/path",
      "app.example.com",
      "ftp://files.example.com",
      "https://app.example.com?x=1",
      "*, https://app.example.com",
      "null",
    ]) {
      assert.match(problemsOf({ PETSTORE_CORS_ORIGINS: text }), /PETSTORE_CORS_ORIGINS/, text)
    }
  })

  it("refuses wildcard patterns in PETSTORE_CORS_ORIGINS at start, naming the variable", () => {
    for (const text of [
      "https://*.example.com",
      "*.example.com",
      "https://app.*.com",
      "https://app.example.com, https://*.example.com",
    ]) {
      const problems = problemsOf({ PETSTORE_CORS_ORIGINS: text })
      assert.match(problems, /^PETSTORE_CORS_ORIGINS must be /, text)
      assert.match(problems, /wildcards and patterns are not supported/, text)
      assert.match(problems, /list each origin/, text)
    }
    assert.deepEqual(configOf({ PETSTORE_CORS_ORIGINS: " * " }).corsOrigins, Option.some("*"))
  })

  it("reads PETSTORE_MAX_CONNECTIONS as a positive integer", () => {
    assert.equal(configOf({ PETSTORE_MAX_CONNECTIONS: "50" }).maxConnections, 50)
    for (const text of ["0", "-5", "1e3", "many"]) {
      assert.match(problemsOf({ PETSTORE_MAX_CONNECTIONS: text }), /PETSTORE_MAX_CONNECTIONS/, text)
    }
  })

  it("turns admission control on by default (50 ms, 200 ms), off with PETSTORE_OVERLOAD_TARGET=off, and refuses an interval shorter than the target", () => {
    assert.deepEqual(configOf({}).overload, Option.some({ targetMs: 50, intervalMs: 200 }))
    assert.deepEqual(
      configOf({ PETSTORE_OVERLOAD_TARGET: "20ms", PETSTORE_OVERLOAD_INTERVAL: "1s" }).overload,
      Option.some({ targetMs: 20, intervalMs: 1_000 }),
    )
    assert.deepEqual(configOf({ PETSTORE_OVERLOAD_TARGET: "off" }).overload, Option.none())
    assert.match(
      problemsOf({ PETSTORE_OVERLOAD_TARGET: "300ms" }),
      /PETSTORE_OVERLOAD_INTERVAL must be at least PETSTORE_OVERLOAD_TARGET/,
    )
    assert.match(problemsOf({ PETSTORE_OVERLOAD_TARGET: "fast" }), /PETSTORE_OVERLOAD_TARGET/)
  })
})
