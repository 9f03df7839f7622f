import { Pet, type PetRepository, type StorageUnavailable } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import type { LogLine } from "@petstore/test-support/log-capture"
import { strictJson } from "@petstore/test-support/strict-json"
import { ManagedRuntime, Schema, type Layer } from "effect"
import { createApp, type Metrics } from "../../src/index.js"
import {
  closeGracefully,
  createServer,
  listen,
  type ConnectionLimits,
} from "../../src/node/index.js"
import { captureLogs } from "./log-capture.js"

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

/** A Pet as the API sends it; decoding refuses any property the spec does not define. */
export const PetBody = Schema.encodedSchema(Pet)
export type PetBody = typeof PetBody.Type

export const readPet = strictJson(PetBody)

export const readPets = strictJson(Schema.Array(PetBody))
