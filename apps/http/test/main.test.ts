import assert from "node:assert/strict"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { request } from "node:http"
import { once } from "node:events"
import { describe, it } from "node:test"
import { fileURLToPath } from "node:url"

const mainPath = fileURLToPath(new URL("../src/main.ts", import.meta.url))

interface RunningServer {
  readonly child: ChildProcessWithoutNullStreams
  readonly url: string
  readonly stdout: () => string
  readonly stderr: () => string
}

/** Starts `main.ts` as its own process, resolving once it logs the address it listens on. */
const startMain = (env: Record<string, string>): Promise<RunningServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", mainPath], {
      env: { PATH: process.env["PATH"] ?? "", PORT: "0", PETSTORE_STORAGE: "memory", ...env },
    })
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(
      () => reject(new Error(`no listening line:\n${stdout}\n${stderr}`)),
      20_000,
    )
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
      const url = /"message":"petstore listening","url":"([^"]+)"/.exec(stdout)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolve({ child, url, stdout: () => stdout, stderr: () => stderr })
      }
    })
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`))
    })
  })

const exitOf = async (child: ChildProcessWithoutNullStreams) => {
  if (child.exitCode !== null) return child.exitCode
  const [code] = await once(child, "exit")
  return code
}

describe("the server process (main)", () => {
  it("with no key configured, generates one, prints it once, and accepts only it", async () => {
    const server = await startMain({})
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
      server.child.kill("SIGTERM")
      await exitOf(server.child)
    }
  })

  it("serves under PETSTORE_BASE_PATH with the keys of PETSTORE_API_KEYS", async () => {
    const server = await startMain({ PETSTORE_API_KEYS: "k1,k2", PETSTORE_BASE_PATH: "/api/v1" })
    try {
      assert.match(server.url, /\/api\/v1$/)
      assert.doesNotMatch(server.stdout(), /generated/)
      const response = await fetch(`${server.url}/pets`, {
        headers: { Authorization: "Bearer k2" },
      })
      assert.equal(response.status, 200)
    } finally {
      server.child.kill("SIGTERM")
      await exitOf(server.child)
    }
  })

  it("on SIGTERM, finishes the request in flight, then exits 0", async () => {
    const server = await startMain({ PETSTORE_API_KEYS: "k" })
    const body = JSON.stringify({ name: "Late", categoryId: 1 })
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const pending = request(
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
      pending.write(body.slice(0, 10))
      // The rest of the body arrives only after the server was told to stop.
      setTimeout(() => {
        server.child.kill("SIGTERM")
        setTimeout(() => pending.end(body.slice(10)), 300)
      }, 300)
    })
    const { status, text } = await answer
    assert.equal(status, 201, text)
    assert.equal(await exitOf(server.child), 0)
    assert.match(server.stdout(), /"message":"stopped"/)
  })

  it("refuses to start on invalid configuration, naming the setting, without a stack trace", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", mainPath], {
      env: { PATH: process.env["PATH"] ?? "", PORT: "eighty", PETSTORE_STORAGE: "memory" },
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    assert.notEqual(await exitOf(child), 0)
    assert.match(stderr, /PORT must be an integer/)
    assert.doesNotMatch(stderr, /\n\s+at /)
  })
})
