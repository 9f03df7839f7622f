import assert from "node:assert/strict"
import { connect } from "node:net"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { Either } from "effect"
import { assertError } from "@petstore/test-support/error-body"
import { openRaw, type RawConnection } from "@petstore/test-support/raw-connection"
import { readConfig } from "../../src/settings/read-config.js"
import { processApiKey, processTestTimeout, startServerProcess } from "../server-process.js"

/**
 * The process's side of a rolling restart (README, "Rolling restarts"): on SIGTERM it says it is
 * not ready at once and goes on serving for `PETSTORE_SHUTDOWN_DRAIN`; then it refuses new
 * connections, answers what comes on kept-alive ones with `Connection: close`, closes the idle
 * ones after `PETSTORE_SHUTDOWN_IDLE`, and exits 0. SIGINT skips the waits.
 */

/** Slack for timers and process start-up on a loaded machine: a step is never early. */
const lateByLessThanMs = 2_000

const request = (path: string) =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${processApiKey}\r\n\r\n`

/** A connection answered once and kept open by the server. */
const keptAlive = async (origin: string): Promise<RawConnection> => {
  const connection = await openRaw(origin)
  connection.socket.write(request("/healthz"))
  const answer = await connection.answer()
  assert.equal(answer.status, 200)
  assert.equal(answer.headers.get("connection"), "keep-alive")
  return connection
}

const accepts = (origin: string): Promise<boolean> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(origin)
    const socket = connect({ port: Number(port), host: hostname })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** Resolves with the time the server first refused a connection. */
const refusedAt = async (origin: string): Promise<number> => {
  while (await accepts(origin)) await sleep(20)
  return performance.now()
}

const logged = async (stdout: () => string, pattern: RegExp) => {
  while (!pattern.test(stdout())) await sleep(20)
}

describe("shutting down behind a load balancer", { timeout: processTestTimeout }, () => {
  it("on SIGTERM: not ready at once, serving through the drain, then Connection: close, idle connections closed after PETSTORE_SHUTDOWN_IDLE, exit 0", async () => {
    const server = await startServerProcess({
      storage: "memory",
      env: { PETSTORE_SHUTDOWN_DRAIN: "2s", PETSTORE_SHUTDOWN_IDLE: "1s" },
    })
    const used = await keptAlive(server.origin)
    const idle = await keptAlive(server.origin)
    const signalled = performance.now()
    server.child.kill("SIGTERM")
    await logged(server.stdout, /"drainMs":2000,"idleMs":1000,.*"message":"shutting down"/)

    const readyz = await fetch(`${server.origin}/readyz`)
    assert.match(await assertError(readyz, 503, "shutting_down"), /shutting down/)
    assert.equal((await fetch(`${server.origin}/healthz`)).status, 200)
    assert.equal((await server.api("/pets")).status, 200)
    used.socket.write(request("/v1/pets"))
    const duringDrain = await used.answer()
    assert.equal(duringDrain.status, 200)
    assert.equal(duringDrain.headers.get("connection"), "keep-alive")

    const refused = await refusedAt(server.origin)
    assert.ok(refused - signalled >= 2_000, `refused ${refused - signalled} ms after SIGTERM`)
    assert.ok(refused - signalled < 2_000 + lateByLessThanMs, `${refused - signalled} ms`)
    used.socket.write(request("/v1/pets"))
    const last = await used.answer()
    assert.equal(last.status, 200)
    assert.equal(last.headers.get("connection"), "close")
    await used.closed

    const idleClosed = await idle.closed
    // Refusals are seen by polling, up to one round late: the idle close is timed from the last.
    assert.ok(idleClosed - refused >= 1_000 - 100, `closed ${idleClosed - refused} ms after`)
    assert.ok(idleClosed - refused < 1_000 + lateByLessThanMs, `${idleClosed - refused} ms`)
    assert.deepEqual(await server.exited, { code: 0, signal: null })
    assert.match(server.stdout(), /"message":"stopped"/)
  })

  it("on SIGINT (Ctrl-C): no drain, no wait for idle connections", async () => {
    const server = await startServerProcess({
      storage: "memory",
      env: { PETSTORE_SHUTDOWN_DRAIN: "10s", PETSTORE_SHUTDOWN_IDLE: "10s" },
    })
    const idle = await keptAlive(server.origin)
    const signalled = performance.now()
    server.child.kill("SIGINT")
    assert.ok((await idle.closed) - signalled < lateByLessThanMs)
    assert.deepEqual(await server.exited, { code: 0, signal: null })
    assert.ok(performance.now() - signalled < lateByLessThanMs)
  })

  it("closes an idle kept-alive connection after PETSTORE_KEEP_ALIVE_TIMEOUT", async () => {
    const server = await startServerProcess({
      storage: "memory",
      env: { PETSTORE_KEEP_ALIVE_TIMEOUT: "1500ms" },
    })
    try {
      const idle = await keptAlive(server.origin)
      const answered = performance.now()
      const closedAfter = (await idle.closed) - answered
      assert.ok(closedAfter >= 1_400 && closedAfter < 1_500 + lateByLessThanMs, `${closedAfter} ms`)
    } finally {
      await server.stop()
    }
  })
})

describe("the shutdown settings", () => {
  const read = (env: Record<string, string>) => readConfig(env)

  it("default to a 5 s drain, 5 s for idle connections, 10 s for requests, 5 s for storage, and a 65 s keep-alive", () => {
    const config = Either.getOrThrow(read({}))
    assert.deepEqual(config.shutdown, {
      drainMs: 5_000,
      idleMs: 5_000,
      requestsMs: 10_000,
      storageMs: 5_000,
    })
    assert.equal(config.keepAliveTimeoutMs, 65_000)
  })

  it("read seconds or milliseconds, 0 included", () => {
    const config = Either.getOrThrow(
      read({
        PETSTORE_SHUTDOWN_DRAIN: "0s",
        PETSTORE_SHUTDOWN_IDLE: "250ms",
        PETSTORE_SHUTDOWN_REQUESTS: "20s",
        PETSTORE_SHUTDOWN_STORAGE: "2500ms",
        PETSTORE_KEEP_ALIVE_TIMEOUT: "5s",
      }),
    )
    assert.deepEqual(config.shutdown, {
      drainMs: 0,
      idleMs: 250,
      requestsMs: 20_000,
      storageMs: 2_500,
    })
    assert.equal(config.keepAliveTimeoutMs, 5_000)
  })

  it("refuse what is not a duration, more than an hour, or a keep-alive of 0, naming each", () => {
    const problems = Either.getLeft(
      read({
        PETSTORE_SHUTDOWN_DRAIN: "5",
        PETSTORE_SHUTDOWN_IDLE: "1.5s",
        PETSTORE_SHUTDOWN_REQUESTS: "2h",
        PETSTORE_SHUTDOWN_STORAGE: "3601s",
        PETSTORE_KEEP_ALIVE_TIMEOUT: "0s",
      }),
    )
    assert.ok(problems._tag === "Some")
    const text = problems.value.join("\n")
    for (const variable of [
      "PETSTORE_SHUTDOWN_DRAIN",
      "PETSTORE_SHUTDOWN_IDLE",
      "PETSTORE_SHUTDOWN_REQUESTS",
      "PETSTORE_SHUTDOWN_STORAGE",
      "PETSTORE_KEEP_ALIVE_TIMEOUT",
    ]) {
      assert.match(text, new RegExp(`^${variable} must be a .*duration`, "m"))
    }
  })
})
