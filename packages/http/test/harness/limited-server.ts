import { MemoryPetRepository } from "@petstore/storage"
import { sendTo, type Answer, type SendOptions } from "@petstore/test-support/requests"
import { ManagedRuntime } from "effect"
import { createApp, type AppOptions } from "../../src/index.js"
import { closeGracefully, createServer, listen } from "../../src/node/index.js"
import { apiKey } from "./server.js"

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
