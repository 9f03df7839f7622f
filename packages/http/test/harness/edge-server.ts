import type { Server } from "node:http"
import { MemoryPetRepository } from "@petstore/storage"
import type { LogLine } from "@petstore/test-support/log-capture"
import { ManagedRuntime } from "effect"
import { createApp, createMetrics, type TrustedProxies } from "../../src/index.js"
import {
  closeGracefully,
  createServer,
  listen,
  type ConnectionLimits,
  type EdgeObservers,
} from "../../src/node/index.js"
import { captureLogs } from "./log-capture.js"
import { apiKey } from "./server.js"

export interface EdgeServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly server: Server
  /** The `refused` lines logged so far. */
  readonly refusals: () => ReadonlyArray<LogLine>
  /** The access lines logged so far: one per request the app saw. */
  readonly requests: () => ReadonlyArray<LogLine>
  readonly close: () => Promise<void>
}

/**
 * The real app (memory storage, the harness's API key, metrics at `/metrics`) on a server with
 * the default limits but those given, its refusals logged and counted as `main.ts` has them;
 * `trustedProxies` may name the client in `X-Forwarded-For` (none unless given).
 */
export const startEdgeServer = async (
  limits: Partial<ConnectionLimits> = {},
  observers: Pick<EdgeObservers, "isTrustedProxy"> = {},
  trustedProxies?: TrustedProxies,
): Promise<EdgeServer> => {
  const logs = captureLogs()
  const metrics = createMetrics({ processMetrics: false })
  const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
  const app = createApp({
    runtime,
    apiKeys: [apiKey],
    logger: logs.logger,
    metrics,
    ...(trustedProxies === undefined ? {} : { limits: { trustedProxies } }),
  })
  const server = createServer(app, {
    limits,
    ...observers,
    logger: logs.logger,
    recordRefusal: metrics.recordEdgeRefusal,
  })
  const port = await listen(server, 0, "127.0.0.1")
  return {
    origin: `http://127.0.0.1:${port}`,
    server,
    refusals: () => logs.lines().filter((line) => line["message"] === "refused"),
    requests: () => logs.lines().filter((line) => line["message"] === "request"),
    close: async () => {
      await closeGracefully(server, 1000)
      await runtime.dispose()
    },
  }
}
