/**
 * Durable creates at one connection, where every create is a batch of its own: the service on
 * an SQLite file, its CPU time per create and each create's latency as a client on core 1 sees
 * it, beside better-sqlite3 alone inserting and committing one pet at a time on the same file,
 * and beside the node:http baseline's create timed by the same client: the HTTP round trip with
 * nothing under it, so its p50 plus better-sqlite3's is the floor for a service on Node's `http`.
 * The rounds interleave the three; each runs while the others are idle.
 */
import { execFile } from "node:child_process"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { Schema } from "effect"
import { clockTicks, cpuTicks } from "@petstore/test-support/process-cpu"
import type { Server } from "./processes.js"
import { percentile } from "./statistics.js"

const benchDir = fileURLToPath(new URL(".", import.meta.url))
const run = promisify(execFile)

const Latencies = Schema.parseJson(
  Schema.Struct({
    latenciesMicros: Schema.Array(Schema.Number),
    cpuMicros: Schema.optional(Schema.Number),
  }),
)
const decodeLatencies = Schema.decodeUnknownSync(Latencies)

/** One layer of the stack under a durable create, and its CPU time per create in each round. */
export interface DurableCreateLayer {
  readonly name: string
  readonly cpuMicros: ReadonlyArray<number>
}
const LayersOutput = Schema.parseJson(
  Schema.Struct({
    creates: Schema.Number,
    layers: Schema.Array(
      Schema.Struct({ name: Schema.String, cpuMicros: Schema.Array(Schema.Number) }),
    ),
  }),
)
const decodeLayers = Schema.decodeUnknownSync(LayersOutput)

/** One round: the service's creates, then the raw commits, on the same file. */
export interface LoneCreatesRound {
  readonly creates: number
  readonly serviceCpuMicrosPerCreate: number
  readonly serviceKernelShare: number
  readonly serviceLatencyMicros: { readonly p50: number; readonly p99: number }
  readonly rawCpuMicrosPerCommit: number
  readonly rawLatencyMicros: { readonly p50: number; readonly p99: number }
  /** The node:http baseline's create (memory, nothing to commit), timed by the same client. */
  readonly floorCpuMicrosPerCreate: number
  readonly floorLatencyMicros: { readonly p50: number; readonly p99: number }
}

const percentiles = (samples: ReadonlyArray<number>) => ({
  p50: percentile(samples, 50),
  p99: percentile(samples, 99),
})

const scriptOutput = (core: number, file: string, args: ReadonlyArray<string>) =>
  run(
    "taskset",
    ["-c", String(core), process.execPath, "--import", "tsx", path.join(benchDir, file), ...args],
    { cwd: benchDir, timeout: 5 * 60_000, maxBuffer: 64 * 1024 * 1024 },
  ).then(({ stdout }) => stdout.trim())

const script = (core: number, file: string, args: ReadonlyArray<string>) =>
  scriptOutput(core, file, args).then(decodeLatencies)

/**
 * The layers under a durable create, each measured in one process pinned to `core` on a file of
 * its own in `directory`; see durable-create-layers.ts.
 */
export const durableCreateLayers = async (options: {
  readonly directory: string
  readonly rounds: number
  readonly creates: number
  readonly core: number
}): Promise<ReadonlyArray<DurableCreateLayer>> =>
  decodeLayers(
    await scriptOutput(options.core, "durable-create-layers.ts", [
      options.directory,
      String(options.rounds),
      String(options.creates),
    ]),
  ).layers

/** Creates sent one after another to `server` from a client on `clientCore`, warm-up first. */
const timedCreates = async (options: {
  readonly server: Server
  readonly apiKey: string
  readonly warmup: number
  readonly creates: number
  readonly clientCore: number
}) => {
  const { server, creates } = options
  // The warm-up runs in the same client, before the CPU time is read.
  await script(options.clientCore, "lone-create-client.ts", [
    server.origin,
    options.apiKey,
    String(options.warmup),
    "0",
  ])
  const before = cpuTicks(server.pid)
  const { latenciesMicros } = await script(options.clientCore, "lone-create-client.ts", [
    server.origin,
    options.apiKey,
    "0",
    String(creates),
  ])
  const after = cpuTicks(server.pid)
  const user = after.user - before.user
  const system = after.system - before.system
  return {
    cpuMicrosPerCreate: (((user + system) / clockTicks) * 1e6) / creates,
    kernelShare: user + system === 0 ? 0 : system / (user + system),
    latencyMicros: percentiles(latenciesMicros),
  }
}

export const loneCreatesRound = async (options: {
  readonly server: Server
  /** The node:http baseline (memory): what one create over HTTP costs with nothing under it. */
  readonly floor: Server
  readonly apiKey: string
  /** The service's SQLite file. */
  readonly filename: string
  readonly warmup: number
  readonly creates: number
  readonly serverCore: number
  readonly clientCore: number
}): Promise<LoneCreatesRound> => {
  const { creates } = options
  const service = await timedCreates(options)
  const raw = await script(options.serverCore, "raw-sqlite-commits.ts", [
    options.filename,
    String(options.warmup),
    String(creates),
  ])
  const floor = await timedCreates({ ...options, server: options.floor })
  return {
    creates,
    serviceCpuMicrosPerCreate: service.cpuMicrosPerCreate,
    serviceKernelShare: service.kernelShare,
    serviceLatencyMicros: service.latencyMicros,
    rawCpuMicrosPerCommit: (raw.cpuMicros ?? Number.NaN) / creates,
    rawLatencyMicros: percentiles(raw.latenciesMicros),
    floorCpuMicrosPerCreate: floor.cpuMicrosPerCreate,
    floorLatencyMicros: floor.latencyMicros,
  }
}
