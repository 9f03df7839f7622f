import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { Effect, Either } from "effect"
import { readConfig } from "../src/settings/read-config.js"
import { effectLogsTo } from "../src/logs/effect-logs.js"
import { captureLogs } from "./log-capture.js"
import { processTestTimeout, startServerProcess, type RunningServer } from "./server-process.js"

// The process's logging: its setting, Effect's log calls, its log. The app's access log and the
// logger are tested in packages/http.

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
