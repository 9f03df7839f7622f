import assert from "node:assert/strict"
import { request, type ClientRequest } from "node:http"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import {
  processTestTimeout,
  spawnServer,
  startServerProcess,
  type RunningServer,
} from "./server-process.js"

/** Starts a POST of a pet whose body is sent only up to `sent` characters; `finish` sends the rest. */
const partialPost = (server: RunningServer, sent: number) => {
  const body = JSON.stringify({ name: "Late", categoryId: 1 })
  let pending: ClientRequest | undefined
  const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
    pending = request(
      `${server.url}/pets`,
      {
        method: "POST",
        headers: {
          Authorization: "Bearer k",
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(body),
        },
      },
      (response) => {
        let text = ""
        response.on("data", (chunk: Buffer) => (text += chunk.toString()))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text }))
      },
    )
    pending.on("error", reject)
    pending.write(body.slice(0, sent))
  })
  return {
    answer,
    finish: () => pending?.end(body.slice(sent)),
    abandon: () => pending?.destroy(),
  }
}

/** Resolves once the server's stdout matches `pattern`. */
const logged = async (server: RunningServer, pattern: RegExp) => {
  while (!pattern.test(server.stdout())) await sleep(20)
}

describe("the server process (main)", { timeout: processTestTimeout }, () => {
  it("with no key configured, generates one, prints it once, and accepts only it", async () => {
    const server = await startServerProcess({ storage: "memory", apiKeys: [] })
    try {
      const key = /Authorization: Bearer ([A-Za-z0-9_-]{43})/.exec(server.stdout())?.[1]
      assert.ok(key, server.stdout())
      assert.equal(server.stdout().split(key).length - 1, 2, "the key appears in the banner only")
      const open = await fetch(`${server.url}/pets`)
      assert.equal(open.status, 401)
      const authorized = await fetch(`${server.url}/pets`, {
        headers: { Authorization: `Bearer ${key}` },
      })
      assert.equal(authorized.status, 200)
    } finally {
      await server.stop()
    }
  })

  it("serves under PETSTORE_BASE_PATH with the keys of PETSTORE_API_KEYS", async () => {
    const server = await startServerProcess({
      storage: "memory",
      apiKeys: ["k1", "k2"],
      env: { PETSTORE_BASE_PATH: "/api/v1" },
    })
    try {
      assert.match(server.url, /\/api\/v1$/)
      assert.doesNotMatch(server.stdout(), /generated/)
      const response = await fetch(`${server.url}/pets`, {
        headers: { Authorization: "Bearer k2" },
      })
      assert.equal(response.status, 200)
    } finally {
      await server.stop()
    }
  })

  it("on SIGTERM, finishes the request in flight, then exits 0", async () => {
    const server = await startServerProcess({ storage: "memory", apiKeys: ["k"] })
    const post = partialPost(server, 10)
    await sleep(300)
    server.child.kill("SIGTERM")
    // The rest of the body arrives only after the server was told to stop.
    await logged(server, /"message":"shutting down"/)
    await sleep(300)
    post.finish()
    const { status, text } = await post.answer
    assert.equal(status, 201, text)
    assert.deepEqual(await server.exited, { code: 0, signal: null })
    assert.match(server.stdout(), /"message":"stopped"/)
  })

  it("on a second SIGTERM or SIGINT, exits at once with 1, whatever is still in flight", async () => {
    for (const second of ["SIGTERM", "SIGINT"] as const) {
      const server = await startServerProcess({ storage: "memory", apiKeys: ["k"] })
      const post = partialPost(server, 10)
      post.answer.catch(() => {})
      await sleep(300)
      server.child.kill("SIGTERM")
      await logged(server, /"message":"shutting down"/)
      const signalled = Date.now()
      server.child.kill(second)
      const exit = await server.exited
      post.abandon()
      assert.deepEqual(exit, { code: 1, signal: null }, second)
      // The graceful wait for the request alone would take 10 s.
      assert.ok(
        Date.now() - signalled < 2_000,
        `${second}: exited after ${Date.now() - signalled} ms`,
      )
      assert.match(server.stderr(), /"message":"second signal: exiting without finishing shutdown"/)
    }
  })

  it("refuses to start on invalid configuration, naming the setting, without a stack trace", async () => {
    const server = spawnServer({ storage: "memory", env: { PORT: "eighty" } })
    assert.notEqual((await server.exited).code, 0)
    assert.match(server.stderr(), /PORT must be an integer/)
    assert.doesNotMatch(server.stderr(), /\n\s+at /)
  })
})
