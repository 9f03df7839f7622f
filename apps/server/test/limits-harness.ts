import assert from "node:assert/strict"
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http"
import { MemoryPetRepository } from "@petstore/storage"
import { ManagedRuntime } from "effect"
import { createApp, type AppOptions } from "@petstore/http"
import { closeGracefully, createServer, listen } from "@petstore/http/node"
import { apiKey } from "./harness.js"

export const otherKey = "other-test-key-9876543210"

/** A clock the test moves by hand, so no test sleeps to see a bucket refill. */
export interface ManualClock {
  readonly now: () => number
  readonly advance: (ms: number) => void
}

export const manualClock = (): ManualClock => {
  let now = 1_000_000
  return { now: () => now, advance: (ms) => (now += ms) }
}

export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface SendOptions {
  readonly method?: string
  /** Sent as they are; an array value becomes that many header lines. */
  readonly headers?: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** The source address, any of 127.0.0.0/8, so one test can be several clients. */
  readonly from?: string
  readonly body?: string
}

export interface LimitedServer {
  readonly origin: string
  /** A request to `path` (the base path included) with nothing added. */
  readonly send: (path: string, options?: SendOptions) => Promise<Answer>
  /** A request under `/v1` with `Authorization: Bearer <key>` (the harness key unless given). */
  readonly withKey: (
    path: string,
    options?: SendOptions & { readonly key?: string },
  ) => Promise<Answer>
  readonly close: () => Promise<void>
}

/** The whole of a response, read to its end. */
export const answerOf = async (response: IncomingMessage): Promise<Answer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of response) chunks.push(Buffer.from(chunk))
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    body: Buffer.concat(chunks).toString("utf8"),
  }
}

/** A request to `origin` + `path` over a connection of its own, with nothing added. */
export const sendTo = (origin: string, path: string, options: SendOptions = {}) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(origin)
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: Number(url.port),
        path,
        method: options.method ?? "GET",
        localAddress: options.from ?? "127.0.0.1",
        agent: false,
      },
      (response) => resolve(answerOf(response)),
    )
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      outgoing.setHeader(name, typeof value === "string" ? value : [...value])
    }
    outgoing.on("error", reject)
    outgoing.end(options.body)
  })

/** The real app on an ephemeral port of 127.0.0.1, with the given options and two API keys. */
export const startLimitedServer = async (
  options: Omit<AppOptions, "runtime" | "apiKeys"> = {},
): Promise<LimitedServer> => {
  const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
  const app = createApp({ ...options, runtime, apiKeys: [apiKey, otherKey] })
  const server = createServer(app)
  const port = await listen(server, 0, "127.0.0.1")
  const origin = `http://127.0.0.1:${port}`
  const send = (path: string, options?: SendOptions) => sendTo(origin, path, options)
  return {
    origin,
    send,
    withKey: (path, { key = apiKey, headers = {}, ...rest } = {}) =>
      send(`/v1${path}`, { ...rest, headers: { ...headers, Authorization: `Bearer ${key}` } }),
    close: async () => {
      await closeGracefully(server, 1000)
      await runtime.dispose()
    },
  }
}

/** Asserts the answer is the Error body with this status and code; returns its message. */
export const assertErrorAnswer = (answer: Answer, status: number, code: string): string => {
  assert.equal(answer.status, status, answer.body)
  assert.match(answer.headers["content-type"] ?? "", /^application\/json/)
  const body: unknown = JSON.parse(answer.body)
  assert.ok(typeof body === "object" && body !== null)
  assert.deepEqual(Object.keys(body).sort(), ["code", "message", "status"])
  assert.deepEqual({ ...body, message: "" }, { code, message: "", status })
  const message = "message" in body ? body.message : undefined
  assert.ok(typeof message === "string" && message.length > 0)
  return message
}
