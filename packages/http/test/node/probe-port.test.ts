import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import { createServer as createNodeServer, type Server } from "node:http"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { assertError } from "@petstore/test-support/error-body"
import { exchange } from "@petstore/test-support/raw-exchange"
import type { Readiness } from "../../src/index.js"
// The package as built: the probe port's thread starts from its compiled module (see serveProbes).
import { serveProbes } from "@petstore/http/node"
import { probeListener, stalledAfterMs } from "../../src/node/probe-listener.js"
import type { ProbeStateReader } from "../../src/node/probe-state.js"
import { listen } from "../../src/node/server.js"

/** The probe port on an ephemeral port, its storage as `storage.ready` says. */
const startProbes = async (servers: ReadonlyArray<Server> = []) => {
  const storage = { ready: true }
  const stopping = new AbortController()
  const probes = await serveProbes({
    port: 0,
    host: "127.0.0.1",
    readiness: async (): Promise<Readiness> =>
      storage.ready ? { ready: true } : { ready: false, reason: "the test took it away" },
    stopping: stopping.signal,
    servers,
  })
  return { origin: `http://127.0.0.1:${probes.port}`, storage, stopping, close: probes.close }
}

/**
 * `curl` in a process of its own, after `delaySeconds`: this thread may block meanwhile. Resolves
 * with the status and the wall-clock time (ms) the answer had arrived by.
 */
const curlLater = (url: string, delaySeconds: number) =>
  new Promise<{ readonly status: number; readonly answeredAt: number }>((resolve, reject) => {
    const script = `sleep ${delaySeconds}; curl -s -o /dev/null -m 10 -w '%{http_code}' "$0"; echo " $(date +%s%3N)"`
    execFile("sh", ["-c", script, url], (error, stdout) => {
      if (error !== null) return reject(error)
      const [status = "", answeredAt = ""] = stdout.trim().split(" ")
      resolve({ status: Number(status), answeredAt: Number(answeredAt) })
    })
  })

/**
 * Keeps this thread, and so its event loop, busy for `ms`, calling `meanwhile` every 10 ms;
 * returns when it let go (wall clock).
 */
const blockThisThread = (ms: number, meanwhile: () => void = () => {}): number => {
  const until = Date.now() + ms
  let next = Date.now()
  while (Date.now() < until) {
    // Busy: no timer, no I/O callback runs here meanwhile.
    if (Date.now() >= next) {
      meanwhile()
      next += 10
    }
  }
  return Date.now()
}

/**
 * Asks `url` from another process `askAtMs` into a block of this thread `blockMs` long (calling
 * `meanwhile` every 10 ms), and asserts the answer, 200, arrived before the block ended.
 */
const assertAnsweredWhileBlocked = async (
  url: string,
  block: { readonly askAtMs: number; readonly blockMs: number; readonly meanwhile?: () => void },
) => {
  const asked = curlLater(url, block.askAtMs / 1000)
  const unblockedAt = blockThisThread(block.blockMs, block.meanwhile)
  const { status, answeredAt } = await asked
  assert.equal(status, 200)
  assert.ok(
    answeredAt < unblockedAt,
    `answered ${answeredAt - unblockedAt} ms after the main thread let go`,
  )
}

describe("the probe port (serveProbes)", () => {
  it("answers GET and HEAD /healthz and /readyz as the app's routes do, and nothing else", async () => {
    const probes = await startProbes()
    try {
      const alive = await fetch(`${probes.origin}/healthz`)
      assert.equal(alive.status, 200)
      assert.deepEqual(await alive.json(), { status: "ok" })
      const ready = await fetch(`${probes.origin}/readyz?from=kubelet`)
      assert.equal(ready.status, 200)
      assert.equal(ready.headers.get("cache-control"), "no-store")
      assert.deepEqual(await ready.json(), { status: "ready" })
      const head = await fetch(`${probes.origin}/healthz`, { method: "HEAD" })
      assert.equal(head.status, 200)
      assert.equal(await head.text(), "")
      await assertError(await fetch(`${probes.origin}/metrics`), 404, "not_found")
      // Exact paths only, as the app's router matches them.
      for (const spelling of ["/HEALTHZ", "/healthz/", "//healthz", "/./healthz", "/%68ealthz"]) {
        const outcome = await exchange(
          probes.origin,
          `GET ${spelling} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
          { head: false, timeoutMs: 2_000 },
        )
        assert.equal(
          outcome.kind === "answered" ? outcome.response.status : outcome.kind,
          404,
          spelling,
        )
      }
      const post = await fetch(`${probes.origin}/healthz`, { method: "POST" })
      assert.equal(post.headers.get("allow"), "GET, HEAD")
      await assertError(post, 405, "method_not_allowed")
    } finally {
      await probes.close()
    }
  })

  it("says not ready once storage stops answering, and at once when the process begins to stop", async () => {
    const probes = await startProbes()
    try {
      probes.storage.ready = false
      let answer = await fetch(`${probes.origin}/readyz`)
      // Storage is asked once a second: within a few, the answer follows it.
      for (let tries = 0; answer.status === 200 && tries < 30; tries++) {
        await answer.arrayBuffer()
        await sleep(100)
        answer = await fetch(`${probes.origin}/readyz`)
      }
      assert.equal(answer.headers.get("retry-after"), "1")
      await assertError(answer, 503, "storage_unavailable")
      assert.equal((await fetch(`${probes.origin}/healthz`)).status, 200)

      probes.storage.ready = true
      probes.stopping.abort()
      await assertError(await fetch(`${probes.origin}/readyz`), 503, "shutting_down")
    } finally {
      await probes.close()
    }
  })

  it("answers while the main thread is busy, from a thread of its own", async () => {
    const probes = await startProbes()
    try {
      // Asked 300 ms into a 1.5 s block of this thread: the answer arrives before it ends.
      await assertAnsweredWhileBlocked(`${probes.origin}/healthz`, { askAtMs: 300, blockMs: 1_500 })
    } finally {
      await probes.close()
    }
  })
})

describe("the probe port of a busy main thread", () => {
  it(`takes each request its servers take as a heartbeat: busy past ${stalledAfterMs} ms without a timer is not stuck`, async () => {
    // A server of the main thread, taking request after request in one long poll of its
    // sockets, its timers waiting: as an overloaded API port does.
    const api = createNodeServer()
    const probes = await startProbes([api])
    try {
      await assertAnsweredWhileBlocked(`${probes.origin}/healthz`, {
        askAtMs: stalledAfterMs + 300,
        blockMs: stalledAfterMs + 1_000,
        meanwhile: () => api.emit("request"),
      })
    } finally {
      await probes.close()
    }
  })
})

describe("the probe listener", () => {
  it(`holds a probe while the main thread has shown no life for ${stalledAfterMs} ms, and answers it once it does`, async () => {
    const loop = { ageMs: stalledAfterMs + 1 }
    const state: ProbeStateReader = { heartbeatAgeMs: () => loop.ageMs, readiness: () => "ready" }
    const server = createNodeServer(probeListener(state))
    const origin = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`
    try {
      let answered = false
      const probe = fetch(`${origin}/healthz`).then((response) => {
        answered = true
        return response
      })
      await sleep(300)
      assert.equal(answered, false, "a stuck thread's probe was answered")
      loop.ageMs = 10
      assert.equal((await probe).status, 200)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
