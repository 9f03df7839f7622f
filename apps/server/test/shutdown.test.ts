import assert from "node:assert/strict"
import { createServer } from "node:http"
import { describe, it } from "node:test"
import { Effect, Layer, ManagedRuntime } from "effect"
import { captureLogs } from "./log-capture.js"
import { listen } from "@petstore/http/node"
import { shutdown } from "../src/server/shutdown.js"

const recordingLogger = () => {
  const { logger, logged } = captureLogs("error")
  return { logger, errors: logged }
}

/** A runtime whose storage takes `closing` to close. */
const runtimeClosingWith = (closing: Effect.Effect<void>) =>
  ManagedRuntime.make(Layer.scopedDiscard(Effect.addFinalizer(() => closing)))

const startedServer = async () => {
  const server = createServer((_request, response) => response.end())
  await listen(server, 0, "127.0.0.1")
  return server
}

describe("shutdown", () => {
  it("closes the server and the storage, then answers 0", async () => {
    let closed = false
    const runtime = runtimeClosingWith(Effect.sync(() => (closed = true)))
    await runtime.runtime()
    const server = await startedServer()
    const { logger, errors } = recordingLogger()
    const code = await shutdown({ server, runtime, logger, graceMs: 1_000, disposeMs: 1_000 })
    assert.equal(code, 0)
    assert.equal(server.listening, false)
    assert.ok(closed)
    assert.deepEqual(errors, [])
  })

  it("says not ready at once, keeps accepting through the drain, then stops and answers 0", async () => {
    const runtime = runtimeClosingWith(Effect.void)
    await runtime.runtime()
    const server = await startedServer()
    const notReady = new AbortController()
    const { logger, errors } = recordingLogger()
    const started = performance.now()
    const stopped = shutdown({
      server,
      runtime,
      logger,
      notReady,
      drainMs: 300,
      idleMs: 100,
      graceMs: 1_000,
      disposeMs: 1_000,
    })
    assert.equal(notReady.signal.aborted, true)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(server.listening, true, "stopped accepting during the drain")
    assert.equal(await stopped, 0)
    assert.equal(server.listening, false)
    assert.ok(performance.now() - started >= 300, `took ${performance.now() - started} ms`)
    assert.deepEqual(errors, [])
  })

  it(
    "gives up on storage that does not close within its deadline, answers 1 and says so",
    {
      timeout: 5_000,
    },
    async () => {
      // Unlike Effect.never, it holds no timer, so it does not keep the test process alive.
      const runtime = runtimeClosingWith(Effect.async<void>(() => {}))
      await runtime.runtime()
      const server = await startedServer()
      const { logger, errors } = recordingLogger()
      const started = Date.now()
      const code = await shutdown({ server, runtime, logger, graceMs: 1_000, disposeMs: 200 })
      assert.equal(code, 1)
      assert.ok(Date.now() - started < 1_000, `took ${Date.now() - started} ms`)
      assert.equal(errors.length, 1)
      assert.match(errors[0] ?? "", /shutdown incomplete.*"unfinished":"closing the storage"/)
    },
  )

  it("answers 1 when closing the storage fails", async () => {
    const runtime = runtimeClosingWith(Effect.die(new Error("disk on fire")))
    await runtime.runtime()
    const server = await startedServer()
    const { logger, errors } = recordingLogger()
    const code = await shutdown({ server, runtime, logger, graceMs: 1_000, disposeMs: 1_000 })
    assert.equal(code, 1)
    assert.match(errors[0] ?? "", /closing the storage/)
  })

  it("exports the last spans once the storage is closed, and exits 0", async () => {
    const order: Array<string> = []
    const runtime = runtimeClosingWith(Effect.sync(() => order.push("storage closed")))
    await runtime.runtime()
    const server = await startedServer()
    const { logger, errors } = recordingLogger()
    const tracing = { shutdown: async () => void order.push("spans exported") }
    const code = await shutdown({
      server,
      runtime,
      logger,
      graceMs: 1_000,
      disposeMs: 1_000,
      tracing,
    })
    assert.equal(code, 0)
    assert.deepEqual(order, ["storage closed", "spans exported"])
    assert.deepEqual(errors, [])
  })

  it(
    "gives the spans what is left of the storage's deadline, then warns and still exits 0",
    { timeout: 5_000 },
    async () => {
      const runtime = runtimeClosingWith(Effect.sleep("150 millis"))
      await runtime.runtime()
      const server = await startedServer()
      const { logger, logged } = captureLogs("warn")
      // A collector that never answers.
      const tracing = { shutdown: () => new Promise<void>(() => {}) }
      const started = Date.now()
      const code = await shutdown({
        server,
        runtime,
        logger,
        graceMs: 1_000,
        disposeMs: 400,
        tracing,
      })
      const tookMs = Date.now() - started
      assert.equal(code, 0)
      assert.ok(tookMs >= 380 && tookMs < 800, `took ${tookMs} ms`)
      assert.equal(logged.length, 1)
      assert.match(logged[0] ?? "", /^the last spans were not all exported .*not done after/)
    },
  )
})
