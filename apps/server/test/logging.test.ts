import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { StorageUnavailable } from "@petstore/core"
import { failingRepository } from "@petstore/storage/testing"
import { Effect, Either } from "effect"
import { readConfig } from "../src/config.js"
import { effectLogsTo } from "../src/logs/effect-logs.js"
import { apiKey, postJson, startServer, type TestServer } from "./harness.js"
import { captureLogs, parseLogLine, type LogLine } from "./log-capture.js"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

const accessLines = (lines: ReadonlyArray<LogLine>, requestId: string) =>
  lines.filter((line) => line["message"] === "request" && line["requestId"] === requestId)

const withoutKey = { headers: { Authorization: "" } }

describe("the access log", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  // Each request, its id, and what its one access line must say.
  const cases = [
    {
      name: "a listing",
      send: (id: string) => server.api("/pets", { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "/v1/pets", operation: "listPets", status: 200 },
    },
    {
      name: "a create",
      send: (id: string) =>
        server.api("/pets", {
          ...postJson({ name: "Rex", categoryId: 1 }),
          headers: { "Content-Type": "application/json", "X-Request-Id": id },
        }),
      line: { method: "POST", route: "/v1/pets", operation: "createPet", status: 201 },
    },
    {
      name: "a pet that does not exist (404), by its route template",
      send: (id: string) => server.api("/pets/424242", { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "/v1/pets/:petId", operation: "getPet", status: 404 },
    },
    {
      name: "a request without a key (401)",
      send: (id: string) =>
        server.api("/pets/7", { headers: { Authorization: "", "X-Request-Id": id } }),
      line: { method: "GET", route: "/v1/pets/:petId", operation: "getPet", status: 401 },
    },
    {
      name: "a wrong key (401)",
      send: (id: string) =>
        server.api("/pets", {
          headers: { Authorization: "Bearer not-the-key", "X-Request-Id": id },
        }),
      line: { method: "GET", route: "/v1/pets", operation: "listPets", status: 401 },
    },
    {
      name: "an unknown path with a key (404), under a fixed label",
      send: (id: string) =>
        server.api("/secret-looking/path-123", { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "unmatched", status: 404 },
    },
    {
      name: "an unknown path without a key (401)",
      send: (id: string) =>
        fetch(`${server.origin}/other/path-456`, { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "unmatched", status: 401 },
    },
    {
      name: "a method the path does not allow (405), by the path's template",
      send: (id: string) =>
        server.api("/pets/9", { method: "DELETE", headers: { "X-Request-Id": id } }),
      line: { method: "DELETE", route: "/v1/pets/:petId", status: 405 },
    },
    {
      name: "a public route",
      send: (id: string) => fetch(`${server.origin}/healthz`, { headers: { "X-Request-Id": id } }),
      line: { method: "GET", route: "/healthz", status: 200 },
    },
  ]

  for (const [index, { name, send, line }] of cases.entries()) {
    it(`writes exactly one line for ${name}`, async () => {
      const id = `access-${index}`
      const response = await send(id)
      await response.arrayBuffer()
      const lines = accessLines(server.logLines(), id)
      assert.equal(lines.length, 1, JSON.stringify(server.logLines()))
      const [access] = lines
      assert.equal(access?.["level"], "info")
      assert.deepEqual(
        {
          method: access?.["method"],
          route: access?.["route"],
          operation: access?.["operation"],
          status: access?.["status"],
        },
        { operation: undefined, ...line },
      )
      assert.equal(typeof access?.["durationMs"], "number")
      assert.ok(Number(access?.["durationMs"]) >= 0)
    })
  }

  it("names the key by its position in PETSTORE_API_KEYS, which no dictionary reverses", async () => {
    await server.api("/pets", { headers: { "X-Request-Id": "with-key" } })
    await server.api("/pets", { headers: { ...withoutKey.headers, "X-Request-Id": "no-key" } })
    const [admitted] = accessLines(server.logLines(), "with-key")
    assert.equal(admitted?.["keyId"], "env:1")
    const [refused] = accessLines(server.logLines(), "no-key")
    assert.equal(refused?.["keyId"], undefined)
  })

  it("names the client address the limits count, on admitted and refused requests alike", async () => {
    await server.api("/pets", { headers: { "X-Request-Id": "address-admitted" } })
    await server.api("/pets", {
      headers: { ...withoutKey.headers, "X-Request-Id": "address-refused" },
    })
    for (const requestId of ["address-admitted", "address-refused"]) {
      const [line] = accessLines(server.logLines(), requestId)
      assert.equal(line?.["address"], "127.0.0.1", requestId)
    }
  })

  it("never writes a path as sent", () => {
    const written = server.logLines().map((line) => JSON.stringify(line))
    assert.ok(written.length > cases.length)
    for (const raw of ["/pets/424242", "secret-looking", "path-123", "path-456", "/pets/9"]) {
      assert.ok(!written.some((line) => line.includes(raw)), `${raw} was logged`)
    }
  })

  it("never writes the key or the Authorization header", () => {
    const written = server.logLines().map((line) => JSON.stringify(line))
    for (const secret of [apiKey, "not-the-key", "Bearer"]) {
      assert.ok(!written.some((line) => line.includes(secret)), `${secret} was logged`)
    }
  })
})

describe("the lines about a request name its id", () => {
  it("a storage failure's warning", async () => {
    const server = await startServer({
      layer: failingRepository(
        Effect.fail(new StorageUnavailable({ cause: new Error("disk gone") })),
      ),
    })
    try {
      const response = await server.api("/pets", { headers: { "X-Request-Id": "storage-trouble" } })
      assert.equal(response.status, 503)
      const lines = server.logLines().filter((line) => line["requestId"] === "storage-trouble")
      assert.deepEqual(
        lines.map((line) => [line["level"], line["message"]]),
        [
          ["warn", "storage unavailable"],
          ["info", "request"],
        ],
      )
      assert.equal(lines[0]?.["operation"], "listPets")
      assert.match(String(lines[0]?.["cause"]), /disk gone/)
    } finally {
      await server.close()
    }
  })

  it("an unexpected failure's error, with its stack", async () => {
    const server = await startServer({
      layer: failingRepository(Effect.die(new Error("secret internal detail"))),
    })
    try {
      const response = await server.api("/pets", { headers: { "X-Request-Id": "defect" } })
      assert.equal(response.status, 500)
      const lines = server.logLines().filter((line) => line["requestId"] === "defect")
      assert.deepEqual(
        lines.map((line) => [line["level"], line["message"], line["status"]]),
        [
          ["error", "request failed unexpectedly", undefined],
          ["info", "request", 500],
        ],
      )
      assert.match(String(lines[0]?.["error"]), /secret internal detail/)
    } finally {
      await server.close()
    }
  })
})

describe("the logger", () => {
  it("writes JSON lines with level, time, pid and message", () => {
    const { logger, raw } = captureLogs()
    logger.info({ answer: 42 }, "hello")
    const line = parseLogLine(raw[0] ?? "")
    assert.equal(line["level"], "info")
    assert.equal(line["message"], "hello")
    assert.equal(line["answer"], 42)
    assert.equal(line["pid"], process.pid)
    assert.ok(!Number.isNaN(Date.parse(String(line["time"]))))
  })

  it("redacts an Authorization header or a key passed to it by mistake", () => {
    const { logger, raw } = captureLogs()
    logger.info({ headers: { authorization: "Bearer sekrit-1" } }, "headers")
    logger.info({ req: { headers: { authorization: "Bearer sekrit-2" } } }, "request")
    logger.info({ authorization: "Bearer sekrit-3", apiKey: "sekrit-4", key: "sekrit-5" }, "keys")
    logger.child({ token: "sekrit-6" }).info("child")
    assert.equal(raw.length, 4)
    for (const line of raw) assert.doesNotMatch(line, /sekrit/)
    assert.match(raw[0] ?? "", /"authorization":"\[redacted\]"/)
  })

  it("writes nothing below its level", () => {
    const { logger, raw } = captureLogs("warn")
    logger.info("not written")
    logger.warn("written")
    assert.deepEqual(
      raw.map((line) => parseLogLine(line)["message"]),
      ["written"],
    )
  })
})

describe("PETSTORE_LOG_LEVEL", () => {
  it("is info unless set, takes pino's levels and silent, and refuses anything else", () => {
    const levelOf = (value: string | undefined) =>
      Either.map(readConfig({ PETSTORE_LOG_LEVEL: value }), (config) => config.logLevel)
    assert.deepEqual(levelOf(undefined), Either.right("info"))
    for (const level of ["trace", "debug", "info", "warn", "error", "fatal", "silent"]) {
      assert.deepEqual(levelOf(level), Either.right(level))
    }
    assert.deepEqual(levelOf("WARN"), Either.right("warn"))
    const refused = levelOf("verbose")
    assert.ok(Either.isLeft(refused))
    assert.match(refused.left.join("\n"), /PETSTORE_LOG_LEVEL must be one of/)
  })
})

describe("Effect's own log calls", () => {
  it("are lines of the same logger", () => {
    const { logger, lines } = captureLogs()
    Effect.runSync(
      Effect.logWarning("purging failed", { attempt: 2 }).pipe(
        Effect.provide(effectLogsTo(logger)),
      ),
    )
    const [line] = lines()
    assert.equal(line?.["level"], "warn")
    assert.equal(line?.["message"], "purging failed")
    assert.deepEqual(line?.["details"], [{ attempt: 2 }])
  })
})

describe("Effect's own log calls inside a span", () => {
  const loggedInSpan = (traceIds: boolean) => {
    const { logger, lines } = captureLogs()
    const span = Effect.runSync(
      Effect.gen(function* () {
        yield* Effect.logInfo("outside")
        return yield* Effect.withSpan(
          Effect.zipLeft(Effect.currentSpan, Effect.logWarning("inside")),
          "repository",
        )
      }).pipe(Effect.provide(effectLogsTo(logger, { traceIds }))),
    )
    return { span, lines: lines() }
  }

  it("carry the span's trace_id and span_id when traces are exported", () => {
    const { span, lines } = loggedInSpan(true)
    const [outside, inside] = lines
    assert.equal(inside?.["message"], "inside")
    assert.equal(inside?.["trace_id"], span.traceId)
    assert.equal(inside?.["span_id"], span.spanId)
    assert.equal(outside?.["trace_id"], undefined)
    assert.equal(outside?.["span_id"], undefined)
  })

  it("carry no ids when they are not, as they would lead nowhere", () => {
    const { lines } = loggedInSpan(false)
    assert.ok(
      lines.every((line) => line["trace_id"] === undefined && line["span_id"] === undefined),
    )
  })
})

describe("the server process's log", () => {
  const key = "process-log-key-0123456789"

  const exercise = async (server: RunningServer) => {
    assert.equal((await server.api("/pets")).status, 200)
    assert.equal((await server.api("/pets/1")).status, 404)
    const refused = await fetch(`${server.url}/pets`, {
      headers: { Authorization: `Bearer ${key}x` },
    })
    assert.equal(refused.status, 401)
  }

  it(
    "at info: the start-up line names the URL and the docs, one access line per request, no key anywhere",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({ storage: "memory", apiKeys: [key] })
      await exercise(server)
      await server.stop()
      const lines = server
        .stdout()
        .split("\n")
        .filter((line) => line !== "")
        .map(parseLogLine)
      const listening = lines.find((line) => line["message"] === "petstore listening")
      assert.equal(listening?.["url"], server.url)
      assert.equal(listening?.["docs"], `${server.origin}/docs`)
      assert.deepEqual(
        lines.filter((line) => line["message"] === "request").map((line) => line["status"]),
        [200, 404, 401],
      )
      assert.deepEqual(
        lines.slice(-2).map((line) => line["message"]),
        ["shutting down", "stopped"],
      )
      assert.ok(!`${server.stdout()}${server.stderr()}`.includes(key), "a key was logged")
    },
  )

  it(
    "at warn: no access lines, but the start-up and shutdown lines still",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({
        storage: "memory",
        apiKeys: [key],
        env: { PETSTORE_LOG_LEVEL: "warn" },
      })
      await exercise(server)
      await server.stop()
      const messages = server
        .stdout()
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => parseLogLine(line)["message"])
      assert.deepEqual(messages, ["petstore listening", "shutting down", "stopped"])
      assert.doesNotMatch(server.stderr(), /"message":"request"/)
    },
  )
})
