/**
 * Creates per second on an SQLite file (WAL, synchronous=FULL) with group commit against one
 * transaction, and one fsync, per create; and how long a listing waits meanwhile.
 *
 *   npm run group-commit -w @petstore/bench [-- --seconds 3]
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { parseArgs, promisify } from "node:util"
import { CategoryId, Limit, NewPet, PetRepository, type StorageUnavailable } from "@petstore/core"
import { createApp, type PetRuntime } from "@petstore/http"
import { MemoryPetRepository } from "@petstore/storage"
import type { GroupCommitOptions } from "@petstore/storage/sql"
import { Effect, ManagedRuntime, Option, Schema, type Layer } from "effect"
import { serveInProcess } from "./in-process-server.js"
import { milliseconds, percentile, table } from "./statistics.js"
import { sqliteStore } from "./stores.js"

const { values } = parseArgs({ options: { seconds: { type: "string", default: "3" } } })
const durationMs = Number(values.seconds) * 1000
const apiKey = "bench-key"
const execFileAsync = promisify(execFile)
const Latencies = Schema.Struct({
  creates: Schema.Array(Schema.Number),
  reads: Schema.Array(Schema.Number),
})

interface Mode {
  readonly label: string
  readonly groupCommit: Partial<GroupCommitOptions>
}

const modes: ReadonlyArray<Mode> = [
  { label: "one transaction per create", groupCommit: { maxBatchSize: 1 } },
  { label: "group commit, one event-loop turn (default)", groupCommit: {} },
  { label: "group commit, 1 ms window", groupCommit: { window: "1 millis" } },
  { label: "group commit, 5 ms window", groupCommit: { window: "5 millis" } },
]

const pet = NewPet.make({ name: "Rex", categoryId: CategoryId.make(1), status: "sold" })
const soldPage = {
  status: Option.some("sold" as const),
  afterId: Option.none(),
  limit: Limit.make(100),
}

const now = Effect.sync(() => performance.now())

/** Runs `effect` over and over until the deadline, returning how long each run took. */
const timedLoop = <E>(deadline: number, effect: Effect.Effect<unknown, E>, pauseMs = 0) =>
  Effect.gen(function* () {
    const timings: Array<number> = []
    while ((yield* now) < deadline) {
      const started = yield* now
      yield* effect
      timings.push((yield* now) - started)
      if (pauseMs > 0) yield* Effect.sleep(pauseMs)
    }
    return timings
  })

/** `concurrency` fibers creating pets, and one listing every millisecond, on the repository. */
const viaRepository = (concurrency: number) =>
  Effect.gen(function* () {
    const repository = yield* PetRepository
    const deadline = (yield* now) + durationMs
    const [writers, reads] = yield* Effect.all(
      [
        Effect.all(
          Array.from({ length: concurrency }, () => timedLoop(deadline, repository.create(pet))),
          { concurrency: "unbounded" },
        ),
        timedLoop(deadline, repository.list(soldPage), 1),
      ],
      { concurrency: "unbounded" },
    )
    return { creates: writers.flat(), reads }
  })

const loadGenerator = fileURLToPath(new URL("./load-generator.ts", import.meta.url))

/** The same over HTTP: the server here, the clients in a process of their own. */
const viaHttp = async (runtime: PetRuntime, concurrency: number) => {
  const server = await serveInProcess(createApp({ runtime, apiKeys: [apiKey] }).callback())
  const args = [server.origin, apiKey, String(concurrency), String(durationMs / 1000)]
  try {
    const { stdout } = await execFileAsync(
      process.execPath,
      ["--import", "tsx", loadGenerator, ...args],
      {
        maxBuffer: 256 * 1024 * 1024,
      },
    )
    return Schema.decodeUnknownSync(Latencies)(JSON.parse(stdout))
  } finally {
    await server.close()
  }
}

const row = (
  label: string,
  concurrency: number,
  { creates, reads }: { creates: ReadonlyArray<number>; reads: ReadonlyArray<number> },
) => [
  label,
  String(concurrency),
  Math.round(creates.length / (durationMs / 1000)).toLocaleString("en"),
  milliseconds(percentile(creates, 50)),
  milliseconds(percentile(creates, 99)),
  milliseconds(percentile(reads, 50)),
  milliseconds(percentile(reads, 99)),
]

const header = [
  "mode",
  "concurrent creates",
  "creates/s",
  "create p50",
  "create p99",
  "list p50",
  "list p99",
]

const repositoryRows: Array<Array<string>> = []
for (const mode of modes) {
  for (const concurrency of [1, 16, 64, 256]) {
    const store = sqliteStore()
    const runtime = ManagedRuntime.make(store.layer(mode.groupCommit))
    try {
      repositoryRows.push(
        row(mode.label, concurrency, await runtime.runPromise(viaRepository(concurrency))),
      )
    } finally {
      await runtime.dispose()
      await store.dispose()
    }
    console.error(`repository: ${mode.label}, ${concurrency} concurrent: done`)
  }
}

const httpRows: Array<Array<string>> = []
const inMemory = { label: "in-memory store, for the HTTP ceiling", groupCommit: {} }
for (const mode of [...modes, inMemory]) {
  for (const concurrency of [1, 16, 64]) {
    const store = sqliteStore()
    const layer: Layer.Layer<PetRepository, StorageUnavailable> =
      mode === inMemory ? MemoryPetRepository.layer : store.layer(mode.groupCommit)
    const runtime = ManagedRuntime.make(layer)
    try {
      await runtime.runtime()
      httpRows.push(row(mode.label, concurrency, await viaHttp(runtime, concurrency)))
    } finally {
      await runtime.dispose()
      await store.dispose()
    }
    console.error(`HTTP: ${mode.label}, ${concurrency} concurrent: done`)
  }
}

console.log(
  `SQLite file, WAL, synchronous=FULL; ${durationMs / 1000} s per row; list = GET of 100 sold pets every ms meanwhile\n`,
)
console.log("On the repository (Effect fibers in one process):\n")
console.log(table(header, repositoryRows))
console.log("\nOver HTTP (the server in this process, the clients in another, keep-alive):\n")
console.log(table(header, httpRows))
