import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer as createNodeServer, type RequestListener, type Server } from "node:http"
import { connect } from "node:net"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { openRaw, type RawAnswer, type RawConnection } from "@petstore/test-support/raw-connection"
import { closeGracefully, createServer, listen } from "../../src/node/index.js"

/**
 * `closeGracefully` stops a server by steps, each bounded: it serves as usual for the drain, then
 * refuses new connections, answers whatever comes on a kept-alive connection with `Connection:
 * close`, leaves idle connections to their clients for `idleMs` before closing them, and cuts
 * the requests still in flight after `graceMs`.
 */

const limit = { timeout: 15_000 }

/** Slack for timers on a loaded machine: a step is never early, and late by less than this. */
const lateByLessThanMs = 1_500

const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`

interface Served {
  readonly server: Server
  readonly origin: string
  /** Lets `GET /slow` requests answer; they wait until then. */
  readonly releaseSlow: () => void
}

/** Holds this process's event loop for `ms`, as a busy or starved process is held. */
const holdEventLoop = (ms: number) => {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // Busy: nothing else of this process runs meanwhile.
  }
}

/**
 * Holds every turn of this process's event loop, in its check phase, for 3 ms (a process that
 * never keeps up), and the first turn after `blockAtMs` for `blockMs` (then it stalls), until
 * `untilMs`. Started before `closeGracefully`, each hold comes before the drain's own look in the
 * same phase.
 */
const holdEveryTurn = (blockAtMs: number, blockMs: number, untilMs: number) => {
  const started = performance.now()
  let blocked = false
  const turn = () => {
    const elapsed = performance.now() - started
    if (elapsed >= untilMs) return
    const stall = !blocked && elapsed >= blockAtMs
    blocked ||= stall
    holdEventLoop(stall ? blockMs : 3)
    setImmediate(turn)
  }
  setImmediate(turn)
}

/** `GET /slow` waits for `releaseSlow`, `GET /hold` holds the event loop 800 ms; anything else is answered at once. */
const answering =
  (slow: Promise<void>): RequestListener =>
  (incoming, response) => {
    const reply = () => {
      response.writeHead(200, { "Content-Type": "text/plain", "Content-Length": 2 })
      response.end("ok")
    }
    if (incoming.url === "/slow") void slow.then(reply)
    else if (incoming.url === "/hold") {
      holdEventLoop(800)
      reply()
    } else reply()
  }

const serve = async (
  make: (listener: RequestListener) => Server = createServer,
): Promise<Served> => {
  let releaseSlow = () => {}
  const slow = new Promise<void>((resolve) => (releaseSlow = resolve))
  const server = make(answering(slow))
  const port = await listen(server, 0, "127.0.0.1")
  return { server, origin: `http://127.0.0.1:${port}`, releaseSlow }
}

/** A connection answered once and kept open by the server (keep-alive). */
const keptAlive = async (origin: string): Promise<RawConnection> => {
  const connection = await openRaw(origin)
  connection.socket.write(request("/"))
  const answer = await connection.answer()
  assert.equal(answer.status, 200)
  assert.notEqual(answer.headers.get("connection"), "close")
  return connection
}

/** Whether a new connection is accepted: resolves with the error code of one refused. */
const connects = (origin: string): Promise<true | string> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(origin)
    const socket = connect({ port: Number(port), host: hostname })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
  })

/** A request on a new connection: its status, or the error code of a connection refused or reset. */
const askOnce = (origin: string): Promise<number | string> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(origin)
    const socket = connect({ port: Number(port), host: hostname }, () => socket.write(request("/")))
    let received = ""
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString()
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]
      if (status === undefined) return
      socket.destroy()
      resolve(Number(status))
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message))
    socket.once("close", () => resolve("closed without an answer"))
  })

/** The outcomes that are neither an answer nor a refusal to connect: requests lost. */
const lost = (outcomes: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
  outcomes.filter((outcome) => outcome !== 200 && outcome !== "ECONNREFUSED")

/** Waits until the server no longer accepts connections; fails past `withinMs`. */
const refusedWithin = async (origin: string, withinMs: number): Promise<number> => {
  const until = performance.now() + withinMs
  for (;;) {
    const outcome = await connects(origin)
    if (outcome !== true) {
      assert.equal(outcome, "ECONNREFUSED")
      return performance.now()
    }
    assert.ok(performance.now() < until, `still accepting connections after ${withinMs} ms`)
    // Less often than the quiet moment the listener is closed at: these connections are not what
    // keeps it open.
    await sleep(60)
  }
}

/**
 * A client in a process of its own (so that it runs while this one is held up). It opens a
 * connection at once and prints `ready` once it is connected; told on its stdin, it sends `GET /hold` on it `holdAfterMs` later (unless
 * negative), and `connectAfterMs` later opens `count` connections at once and sends a request on
 * each; it prints how each of those ended as one JSON array (a status, or the error) on a line
 * of its own, and exits.
 */
const clientScript = `
const { connect } = require("node:net")
const [port, count, holdAfterMs, connectAfterMs] = process.argv.slice(1).map(Number)
const request = (path) => "GET " + path + " HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"
const held = connect({ port, host: "127.0.0.1" }, () => process.stdout.write("ready\\n"))
held.on("error", () => {})
held.resume()
process.stdin.once("data", () => {
  if (holdAfterMs >= 0) setTimeout(() => held.write(request("/hold")), holdAfterMs)
  setTimeout(() => {
    const outcomes = Array.from({ length: count }, () => new Promise((resolve) => {
      const socket = connect({ port, host: "127.0.0.1" }, () => socket.write(request("/")))
      let received = ""
      socket.on("data", (chunk) => {
        received += chunk
        const status = /^HTTP\\/1\\.1 (\\d{3})/.exec(received)
        if (status) { socket.destroy(); resolve(Number(status[1])) }
      })
      socket.on("error", (error) => resolve(error.code ?? error.message))
      socket.on("close", () => resolve("closed without an answer"))
    }))
    Promise.all(outcomes).then((all) => process.stdout.write(JSON.stringify(all), () => process.exit(0)))
  }, connectAfterMs)
})
`

interface Client {
  /** Tells it to go. */
  readonly go: () => void
  /** How each of its connections ended. */
  readonly outcomes: () => Promise<ReadonlyArray<unknown>>
}

const startClient = async (
  origin: string,
  count: number,
  holdAfterMs: number,
  connectAfterMs: number,
): Promise<Client> => {
  const args = [new URL(origin).port, count, holdAfterMs, connectAfterMs].map(String)
  const client = spawn(process.execPath, ["-e", clientScript, ...args])
  let printed = ""
  client.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()))
  const exited = once(client, "exit")
  // Started, and its first connection accepted: however long a loaded machine takes to start it,
  // its timings count from `go`.
  while (!printed.startsWith("ready\n")) {
    assert.equal(client.exitCode, null, "the client exited before it was ready")
    await sleep(10)
  }
  await sleep(50)
  return {
    go: () => client.stdin.end("go\n"),
    outcomes: async () => {
      await exited
      const outcomes: unknown = JSON.parse(printed.slice("ready\n".length))
      assert.ok(Array.isArray(outcomes), printed)
      return outcomes
    },
  }
}

const assertLastAnswer = (answer: RawAnswer) => {
  assert.equal(answer.status, 200)
  assert.equal(answer.headers.get("connection"), "close")
}

describe("closeGracefully", () => {
  it(
    "goes on accepting and keeping connections alive for the drain, then refuses new ones",
    limit,
    async () => {
      const { server, origin } = await serve()
      const kept = await keptAlive(origin)
      const started = performance.now()
      const closed = closeGracefully(server, { drainMs: 600, idleMs: 200, graceMs: 2_000 })
      await sleep(100)
      // During the drain: a new connection is served and kept alive, and so is an old one.
      const fresh = await keptAlive(origin)
      kept.socket.write(request("/"))
      const again = await kept.answer()
      assert.equal(again.status, 200)
      assert.notEqual(again.headers.get("connection"), "close")
      const refusedAt = await refusedWithin(origin, 600 + lateByLessThanMs)
      assert.ok(refusedAt - started >= 600, `refused after ${refusedAt - started} ms`)
      await closed
      fresh.socket.destroy()
      kept.socket.destroy()
    },
  )

  it(
    "ends the drain after accepting the connections that queued while a timer held its event loop, never resetting them",
    limit,
    async () => {
      const { server, origin } = await serve()
      const client = await startClient(origin, 30, -1, 0)
      const closed = closeGracefully(server, { drainMs: 100, idleMs: 100, graceMs: 5_000 })
      await sleep(20)
      client.go()
      // Held past the end of the drain: the client's connections wait in the accept queue, and
      // the drain's timer is due before the event loop polls again.
      holdEventLoop(500)
      await closed
      assert.deepEqual(
        await client.outcomes(),
        Array.from({ length: 30 }, () => 200),
      )
    },
  )

  it(
    "ends the drain after accepting the connections that queued while a request held its event loop, never resetting them",
    limit,
    async () => {
      const { server, origin } = await serve()
      // The client sends GET /hold at 190 ms, then opens its connections at 540 ms.
      const client = await startClient(origin, 30, 150, 500)
      const closed = closeGracefully(server, { drainMs: 100, idleMs: 100, graceMs: 5_000 })
      await sleep(40)
      client.go()
      // Held from 40 to 340 ms: the drain's timer (100 ms) and GET /hold (190 ms) are both due when
      // the loop goes on, the timer first. The request then holds the loop in its poll from 340 to
      // 1140 ms, and the client's connections arrive meanwhile, after that poll began.
      setImmediate(() => holdEventLoop(300))
      await closed
      assert.deepEqual(
        await client.outcomes(),
        Array.from({ length: 30 }, () => 200),
      )
    },
  )

  // Closing a listener resets the connections in its accept queue, requests sent on them included.
  // Linux tells how many wait there; elsewhere the drain can only guess (a short turn).
  const linuxOnly = {
    ...limit,
    skip: process.platform !== "linux" && "the accept queue is read from Linux's /proc/net/tcp",
  }

  it(
    "in a process whose turns never run short, stops accepting once the kernel says no connection waits, not at a moment it may be stalled",
    linuxOnly,
    async () => {
      const { server, origin } = await serve()
      // Its connections arrive 1,050 ms into the search for a quiet moment (after the 100 ms drain),
      // while this process is stalled from 1,050 to 1,450 ms: past quietWaitMs, when any moment
      // with nobody waiting will do.
      const client = await startClient(origin, 30, -1, 1_150)
      holdEveryTurn(1_050, 400, 1_600)
      client.go()
      await closeGracefully(server, { drainMs: 100, idleMs: 100, graceMs: 5_000 })
      assert.deepEqual(lost(await client.outcomes()), [])
    },
  )

  it(
    "while connections keep arriving and its turns never run short, waits until none waits in the accept queue before it stops accepting",
    linuxOnly,
    async () => {
      const { server, origin } = await serve()
      // As above, stalled from 1,050 to 1,650 ms, and a new connection every 20 ms until the stall:
      // no moment is quiet before it.
      const client = await startClient(origin, 30, -1, 1_150)
      holdEveryTurn(1_050, 600, 1_800)
      const asked: Array<Promise<number | string>> = []
      const asking = setInterval(() => asked.push(askOnce(origin)), 20)
      client.go()
      const closed = closeGracefully(server, { drainMs: 100, idleMs: 100, graceMs: 5_000 })
      await sleep(1_050)
      clearInterval(asking)
      await closed
      assert.deepEqual(lost(await Promise.all(asked)), [])
      const outcomes = await client.outcomes()
      assert.deepEqual(lost(outcomes), [])
      // Past the first second any moment with nobody waiting will do, but not one with somebody.
      assert.ok(outcomes.includes(200), `the stall's connections: ${JSON.stringify(outcomes)}`)
    },
  )

  it(
    "while connections keep arriving at the end of the drain, goes on accepting them, at most quietWithinMs",
    limit,
    async () => {
      const { server, origin } = await serve()
      const started = performance.now()
      const closed = closeGracefully(server, { drainMs: 200, idleMs: 100, graceMs: 5_000 })
      // A new connection every 20 ms until 600 ms: the listener stays open until they stop.
      const served: Array<Promise<void>> = []
      while (performance.now() - started < 600) {
        served.push(keptAlive(origin).then((connection) => void connection.socket.destroy()))
        await sleep(20)
      }
      await Promise.all(served)
      const refusedAt = await refusedWithin(origin, lateByLessThanMs)
      assert.ok(refusedAt - started >= 600, `refused after ${refusedAt - started} ms`)
      await closed
    },
  )

  it(
    "answers a request on a kept-alive connection with Connection: close once it no longer accepts, then closes it",
    limit,
    async () => {
      const { server, origin } = await serve()
      const kept = await keptAlive(origin)
      const closed = closeGracefully(server, { idleMs: 5_000, graceMs: 10_000 })
      await refusedWithin(origin, lateByLessThanMs)
      kept.socket.write(request("/"))
      assertLastAnswer(await kept.answer())
      await kept.closed
      // Nothing else is open: it is done long before the idle connections would have been closed.
      const started = performance.now()
      await closed
      assert.ok(performance.now() - started < lateByLessThanMs)
    },
  )

  it(
    "leaves an idle kept-alive connection to its client for idleMs, then closes it",
    limit,
    async () => {
      const { server, origin } = await serve()
      const kept = await keptAlive(origin)
      const started = performance.now()
      const closed = closeGracefully(server, { idleMs: 800, graceMs: 5_000 })
      const closedAt = await kept.closed
      assert.ok(closedAt - started >= 790, `closed after ${closedAt - started} ms`)
      assert.ok(
        closedAt - started < 800 + lateByLessThanMs,
        `closed after ${closedAt - started} ms`,
      )
      await closed
    },
  )

  it(
    "finishes a request in flight, its answer saying Connection: close, and resolves once it is sent",
    limit,
    async () => {
      const { server, origin, releaseSlow } = await serve()
      const inFlight = await openRaw(origin)
      inFlight.socket.write(request("/slow"))
      await sleep(100)
      let resolved = false
      const closed = closeGracefully(server, { idleMs: 200, graceMs: 5_000 }).then(
        () => (resolved = true),
      )
      await refusedWithin(origin, lateByLessThanMs)
      await sleep(400)
      assert.equal(resolved, false, "resolved while a request was in flight")
      releaseSlow()
      assertLastAnswer(await inFlight.answer())
      await inFlight.closed
      await closed
    },
  )

  it("cuts the connection of a request still in flight after graceMs", limit, async () => {
    const { server, origin } = await serve()
    const inFlight = await openRaw(origin)
    inFlight.socket.write(request("/slow"))
    await sleep(100)
    const started = performance.now()
    await closeGracefully(server, { idleMs: 100, graceMs: 500 })
    const tookMs = performance.now() - started
    assert.ok(tookMs >= 490 && tookMs < 500 + lateByLessThanMs, `took ${tookMs} ms`)
    await inFlight.closed
    await assert.rejects(inFlight.answer(100), /closed without a whole answer/)
  })

  it(
    "given a number, it is graceMs alone: idle connections are closed at once",
    limit,
    async () => {
      const { server, origin } = await serve()
      const kept = await keptAlive(origin)
      const started = performance.now()
      await closeGracefully(server, 5_000)
      const closedAt = await kept.closed
      assert.ok(closedAt - started < lateByLessThanMs, `closed after ${closedAt - started} ms`)
    },
  )

  it(
    "on a server it did not make, still answers with Connection: close once it no longer accepts",
    limit,
    async () => {
      const { server, origin } = await serve((listener) => createNodeServer(listener))
      const kept = await keptAlive(origin)
      const closed = closeGracefully(server, { idleMs: 5_000, graceMs: 10_000 })
      await refusedWithin(origin, lateByLessThanMs)
      kept.socket.write(request("/"))
      assertLastAnswer(await kept.answer())
      await kept.closed
      await closed
    },
  )
})
