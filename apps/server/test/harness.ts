import { Pet } from "@petstore/core"
import { createApp, type Metrics } from "@petstore/http"
import { closeGracefully, createServer, listen, type ConnectionLimits } from "@petstore/http/node"
import { strictJson } from "@petstore/test-support/strict-json"
import { ManagedRuntime, Schema } from "effect"
import { storageLayer, type StorageChoice } from "../src/storage/storage-selection.js"
import { captureLogs } from "./log-capture.js"

export const apiKey = "test-key-0123456789"

/** A Pet as the API sends it; decoding refuses any property the spec does not define. */
export const PetBody = Schema.encodedSchema(Pet)
export type PetBody = typeof PetBody.Type

export const readPet = strictJson(PetBody)

export const readPets = strictJson(Schema.Array(PetBody))

export interface AppServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly basePath: string
  /** A request under the base path, with the API key unless `headers` replace it. */
  readonly api: (path: string, init?: RequestInit) => Promise<Response>
  readonly close: () => Promise<void>
}

export interface AppServerOptions {
  /** What the process gives `storageLayer` beside the choice: group commit's observer, … */
  readonly storage?: Parameters<typeof storageLayer>[1]
  readonly connectionLimits?: Partial<ConnectionLimits>
  /** The app's metrics; a registry of its own unless given. */
  readonly metrics?: Metrics
}

/**
 * The real app in this process, on the storage `choice` names as the process wires it (its
 * `storageLayer`), on an ephemeral port of 127.0.0.1 under `/v1` with `apiKey`: for what needs
 * SQLite or PostgreSQL, or a package the library's tests may not use, but no process of its own.
 * The app on memory or a fake repository is tested in `packages/http`.
 */
export const startApp = async (
  choice: StorageChoice,
  options: AppServerOptions = {},
): Promise<AppServer> => {
  const basePath = "/v1"
  const runtime = ManagedRuntime.make(storageLayer(choice, options.storage))
  const app = createApp({
    runtime,
    apiKeys: [apiKey],
    basePath,
    logger: captureLogs().logger,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  })
  const server = createServer(app, {
    ...(options.connectionLimits === undefined ? {} : { limits: options.connectionLimits }),
  })
  const origin = `http://127.0.0.1:${await listen(server, 0, "127.0.0.1")}`
  return {
    origin,
    basePath,
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
