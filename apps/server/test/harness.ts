import assert from "node:assert/strict"
import { connect } from "node:net"
import { Pet, type PetRepository, type StorageUnavailable } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { ManagedRuntime, Schema, type Layer } from "effect"
import { createApp, type Metrics } from "@petstore/http"
import { closeGracefully, createServer, listen, type ConnectionLimits } from "@petstore/http/node"
import { captureLogs, type LogLine } from "./log-capture.js"

export const apiKey = "test-key-0123456789"

export interface TestServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly basePath: string
  /** A request under the base path, with the API key unless `headers` replace it. */
  readonly api: (path: string, init?: RequestInit) => Promise<Response>
  /** Each log line as `<message> <fields as JSON>`. */
  readonly logged: ReadonlyArray<string>
  /** Each log line, parsed. */
  readonly logLines: () => ReadonlyArray<LogLine>
  readonly close: () => Promise<void>
}

export interface TestServerOptions {
  readonly layer?: Layer.Layer<PetRepository, StorageUnavailable>
  readonly apiKeys?: ReadonlyArray<string>
  readonly basePath?: string
  readonly connectionLimits?: ConnectionLimits
  /** The app's metrics; a registry of its own unless given, none when false. */
  readonly metrics?: Metrics | false
}

/** The real app on a real HTTP server on an ephemeral port of 127.0.0.1. */
export const startServer = async (options: TestServerOptions = {}): Promise<TestServer> => {
  const basePath = options.basePath ?? "/v1"
  const logs = captureLogs()
  const runtime = ManagedRuntime.make(options.layer ?? MemoryPetRepository.layer)
  const app = createApp({
    runtime,
    apiKeys: options.apiKeys ?? [apiKey],
    basePath,
    logger: logs.logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  })
  const server = createServer(app, {
    ...(options.connectionLimits === undefined ? {} : { limits: options.connectionLimits }),
  })
  const port = await listen(server, 0, "127.0.0.1")
  const origin = `http://127.0.0.1:${port}`
  return {
    origin,
    basePath,
    logged: logs.logged,
    logLines: logs.lines,
    api: (path, init = {}) => {
      const headers = new Headers(init.headers)
      if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${apiKey}`)
      return fetch(`${origin}${basePath}${path}`, { ...init, headers })
    },
    close: async () => {
      await closeGracefully(server, 1000)
      await runtime.dispose()
    },
  }
}

export const postJson = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
})

/** Asserts the response is the spec's Error body with this status and code, and returns it. */
export const assertError = async (response: Response, status: number, code: string) => {
  assert.equal(response.status, status)
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
  const body: unknown = await response.json()
  assert.ok(typeof body === "object" && body !== null)
  assert.deepEqual(Object.keys(body).sort(), ["code", "message", "status"])
  assert.deepEqual({ ...body, message: "" }, { code, message: "", status })
  const message = "message" in body ? body.message : undefined
  assert.ok(typeof message === "string" && message.length > 0)
  return message
}

/** Sends bytes as they are and returns what the server wrote back, for requests fetch will not make. */
export const rawRequest = (origin: string, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin)
    const socket = connect(Number(port), hostname)
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    socket.on("error", reject)
    socket.write(request)
  })

/** A Pet as the API sends it; decoding refuses any property the spec does not define. */
export const PetBody = Schema.encodedSchema(Pet)
export type PetBody = typeof PetBody.Type

const strict = { onExcessProperty: "error" } as const

export const readPet = async (response: Response): Promise<PetBody> =>
  Schema.decodeUnknownPromise(PetBody, strict)(await response.json())

export const readPets = async (response: Response): Promise<ReadonlyArray<PetBody>> =>
  Schema.decodeUnknownPromise(Schema.Array(PetBody), strict)(await response.json())
