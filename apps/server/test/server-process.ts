import assert from "node:assert/strict"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { builtEntry } from "./built-entry.js"
import { readPets, type PetBody } from "./harness.js"

const appDirectory = fileURLToPath(new URL("..", import.meta.url))

export const processApiKey = "durability-test-key"

/** The most a test that starts server processes may take before it counts as failed. */
export const processTestTimeout = 90_000

/** The uid and gid of `nobody`: under root, permission checks only bite an unprivileged process. */
const unprivileged = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {}

export interface ServerProcessOptions {
  /** The `PETSTORE_STORAGE` value; unset when undefined. */
  readonly storage: string | undefined
  /** The working directory; this package's unless given. */
  readonly cwd?: string
  /** Runs the process as `nobody` when the tests run as root, so file permissions apply. */
  readonly unprivileged?: boolean
  /** `PETSTORE_API_KEYS`; `[processApiKey]` unless given, unset when empty. */
  readonly apiKeys?: ReadonlyArray<string>
  /**
   * More variables, overriding those above and the defaults (`HOST`, `PORT`, `PETSTORE_BASE_PATH`,
   * and no shutdown drain: `PETSTORE_SHUTDOWN_DRAIN` and `PETSTORE_SHUTDOWN_IDLE` at `0s`).
   */
  readonly env?: Readonly<Record<string, string>>
}

export interface ProcessExit {
  readonly code: number | null
  readonly signal: string | null
}

/** The server (`main`) running as a process of its own. */
export interface ServerProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly exited: Promise<ProcessExit>
  readonly stdout: () => string
  readonly stderr: () => string
}

/** A server process that has logged the URL it listens on. */
export interface RunningServer extends ServerProcess {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** The URL the server logged: the origin and the base path. */
  readonly url: string
  /** A request to a path that includes the base path (as a `Link` header gives it), with the first API key. */
  readonly request: (path: string, init?: RequestInit) => Promise<Response>
  /** A request under the base path, with the first API key unless `init` sends another. */
  readonly api: (path: string, init?: RequestInit) => Promise<Response>
  /** SIGTERM, then the exit once shutdown is done. */
  readonly stop: () => Promise<ProcessExit>
}

const running = new Set<ChildProcessWithoutNullStreams>()
// A test that fails midway must not leave servers behind.
process.on("exit", () => running.forEach((child) => child.kill("SIGKILL")))

/** Starts the server (`main`) on 127.0.0.1 with an ephemeral port and the given storage. */
export const spawnServer = (options: ServerProcessOptions): ServerProcess => {
  const apiKeys = options.apiKeys ?? [processApiKey]
  const child = spawn(process.execPath, builtEntry("main"), {
    cwd: options.cwd ?? appDirectory,
    env: {
      PATH: process.env["PATH"] ?? "",
      HOST: "127.0.0.1",
      PORT: "0",
      PETSTORE_BASE_PATH: "/v1",
      // No load balancer in front: a SIGTERM stops accepting at once and closes idle connections
      // (test/redeploy tests the drain).
      PETSTORE_SHUTDOWN_DRAIN: "0s",
      PETSTORE_SHUTDOWN_IDLE: "0s",
      ...(apiKeys.length === 0 ? {} : { PETSTORE_API_KEYS: apiKeys.join(",") }),
      ...(options.storage === undefined ? {} : { PETSTORE_STORAGE: options.storage }),
      ...options.env,
    },
    ...(options.unprivileged === true ? unprivileged : {}),
  })
  running.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = once(child, "exit").then(([code, signal]: Array<unknown>) => {
    running.delete(child)
    return {
      code: typeof code === "number" ? code : null,
      signal: typeof signal === "string" ? signal : null,
    }
  })
  return { child, exited, stdout: () => stdout, stderr: () => stderr }
}

/** The origin and base path of the start-up line's `url`, once the server has written it. */
const listeningUrl = (stdout: string): [string, string] | undefined => {
  // The last piece is a line still being written.
  for (const line of stdout.split("\n").slice(0, -1)) {
    if (!line.includes('"petstore listening"')) continue
    const url = parseLogLine(line)["url"]
    if (typeof url !== "string") continue
    const origin = new URL(url).origin
    return [origin, url.slice(origin.length)]
  }
  return undefined
}

/** Starts the server and resolves once it listens; rejects with its output if it exits first. */
export const startServerProcess = async (options: ServerProcessOptions): Promise<RunningServer> => {
  const server = spawnServer(options)
  const [origin, basePath] = await new Promise<[string, string]>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running: nothing else would stop it, and it would keep the test process alive.
      server.child.kill("SIGKILL")
      reject(new Error(`not listening after 20 s:\n${server.stderr()}`))
    }, 20_000)
    server.child.stdout.on("data", () => {
      const listening = listeningUrl(server.stdout())
      if (listening === undefined) return
      clearTimeout(timer)
      resolve(listening)
    })
    void server.exited.then((exit) => {
      clearTimeout(timer)
      reject(new Error(`exited (${JSON.stringify(exit)}) before listening:\n${server.stderr()}`))
    })
  })
  const [apiKey] = options.apiKeys ?? [processApiKey]
  const request = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers)
    if (apiKey !== undefined && !headers.has("Authorization")) {
      headers.set("Authorization", `Bearer ${apiKey}`)
    }
    return fetch(`${origin}${path}`, { ...init, headers })
  }
  return {
    ...server,
    origin,
    url: `${origin}${basePath}`,
    request,
    api: (path, init) => request(`${basePath}${path}`, init),
    stop: async () => {
      server.child.kill("SIGTERM")
      return server.exited
    },
  }
}

/** The target of a `Link: <…>; rel="next"` header. */
export const nextLink = (response: Response): string => {
  const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1]
  assert.ok(link !== undefined, `no rel="next" link in ${response.headers.get("Link")}`)
  return link
}

/** Every pet a listing holds, following `rel="next"` links from `path` (e.g. `/v1/pets?limit=100`). */
export const listEveryPet = async (
  server: RunningServer,
  path: string,
): Promise<ReadonlyArray<PetBody>> => {
  const pets: Array<PetBody> = []
  for (let next: string | undefined = path; next !== undefined;) {
    const response = await server.request(next)
    assert.equal(response.status, 200)
    next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1]
    pets.push(...(await readPets(response)))
  }
  return pets
}
