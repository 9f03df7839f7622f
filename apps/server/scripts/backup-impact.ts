/**
 * What a backup costs a running server: the latency of creates while backups of a store of
 * 100,000 pets run back to back, against the same load with no backup. Runs the built server
 * and CLI (`npm run build` first), from apps/server:
 *
 *   npx tsx scripts/backup-impact.ts file:/tmp/impact.db
 *   npx tsx scripts/backup-impact.ts postgres://postgres@127.0.0.1:5432/impact   # an empty database
 *
 * Rough figures for the README, not a benchmark: the server, the load and the backups share
 * this machine's cores.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import * as SqlClient from "@effect/sql/SqlClient"
import { migrate } from "@petstore/storage/sql"
import { Effect, Either } from "effect"
import { openStore } from "../src/backup/store-clients.js"
import { parseStorageChoice } from "../src/storage/storage-selection.js"

const storage = process.argv[2] ?? "file:/tmp/petstore-impact.db"
const pets = 100_000
const clients = 16
const windowMillis = 8_000
const dist = fileURLToPath(new URL("../dist/", import.meta.url))
const directory = mkdtempSync(path.join(tmpdir(), "petstore-impact-"))
const apiKey = "backup-impact-measuring-key"

const choice = Either.getOrThrow(parseStorageChoice(storage))
if (choice.kind === "memory") throw new Error("memory storage has nothing to back up")

await Effect.runPromise(
  Effect.scoped(
    Effect.flatMap(openStore(choice), (sql) =>
      Effect.gen(function* () {
        yield* migrate
        const [row] = yield* sql`SELECT count(*) AS count FROM pets`
        const missing = pets - Number(row?.["count"] ?? 0)
        if (missing <= 0) return
        yield* sql.onDialectOrElse({
          pg: () =>
            sql`INSERT INTO pets (name, category_id, status)
                SELECT 'seeded pet ' || g, g, 'available' FROM generate_series(1, ${missing}) g`,
          orElse: () =>
            sql`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ${missing})
                INSERT INTO pets (name, category_id, status)
                SELECT 'seeded pet ' || i, i, 'available' FROM g`,
        })
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
    ),
  ),
)

const server = spawn(process.execPath, [path.join(dist, "main.js")], {
  env: {
    PATH: process.env["PATH"] ?? "",
    PORT: "0",
    PETSTORE_STORAGE: storage,
    PETSTORE_API_KEYS: apiKey,
    PETSTORE_LOG_LEVEL: "warn",
    PETSTORE_RATE_LIMIT: "off",
  },
  stdio: ["ignore", "pipe", "inherit"],
})
const url = await new Promise<string>((resolve) => {
  let output = ""
  server.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString()
    const found = /"url":"([^"]+)"/.exec(output)?.[1]
    if (found !== undefined) resolve(found)
  })
})

/** Creates at `clients` at a time for `windowMillis`; answers each latency in milliseconds. */
const createFor = async (): Promise<Array<number>> => {
  const latencies: Array<number> = []
  const until = Date.now() + windowMillis
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = 0; Date.now() < until; n++) {
        const started = performance.now()
        const response = await fetch(`${url}/pets`, {
          method: "POST",
          headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
          body: JSON.stringify({ name: `load ${client} ${n}`, categoryId: n }),
        })
        await response.arrayBuffer()
        if (response.status !== 201) throw new Error(`a create answered ${response.status}`)
        latencies.push(performance.now() - started)
      }
    }),
  )
  return latencies.sort((a, b) => a - b)
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0).toFixed(1)

/**
 * Backups one after another until `stop`; answers each one's seconds. With `refused`, each names
 * a file that exists, so the CLI starts, is refused and exits without touching the store: what
 * starting the process alone costs the server, on a machine of few cores.
 */
const backUpUntil = async (stop: Promise<unknown>, refused: boolean) => {
  let stopped = false
  void stop.then(() => (stopped = true))
  const durations: Array<number> = []
  for (let n = 0; !stopped; n++) {
    const started = performance.now()
    const cli = spawn(
      process.execPath,
      [
        path.join(dist, "cli/storage.js"),
        "backup",
        path.join(directory, refused ? "0.backup" : `${n}.backup`),
      ],
      {
        env: { PATH: process.env["PATH"] ?? "", PETSTORE_STORAGE: storage },
        stdio: ["ignore", "pipe", refused ? "ignore" : "inherit"],
      },
    )
    let summary = ""
    cli.stdout.on("data", (chunk: Buffer) => (summary += chunk.toString()))
    const [code] = await once(cli, "exit")
    if (code !== (refused ? 1 : 0)) throw new Error(`the backup exited ${code}`)
    durations.push((performance.now() - started) / 1000)
    if (n === 0 && !refused) process.stdout.write(summary)
  }
  return durations
}

try {
  const idle = await createFor()
  const load = createFor()
  const backups = await backUpUntil(load, false)
  const during = await load
  const control = createFor()
  await backUpUntil(control, true)
  const starting = await control
  const median = [...backups].sort((a, b) => a - b)[Math.floor(backups.length / 2)] ?? 0
  process.stdout.write(
    [
      `store: ${storage} (${pets} pets before the load)`,
      `backup of the store: ${backups.length} in ${windowMillis / 1000} s, median ${median.toFixed(2)} s each (the CLI's start included)`,
      `creates at ${clients} clients, idle: ${idle.length} answered, p50 ${percentile(idle, 0.5)} ms, p99 ${percentile(idle, 0.99)} ms`,
      `creates at ${clients} clients, during backups: ${during.length} answered, p50 ${percentile(during, 0.5)} ms, p99 ${percentile(during, 0.99)} ms`,
      `creates at ${clients} clients, during refused backups (the CLI starting alone): ${starting.length} answered, p50 ${percentile(starting, 0.5)} ms, p99 ${percentile(starting, 0.99)} ms`,
    ].join("\n") + "\n",
  )
} finally {
  server.kill("SIGTERM")
  await once(server, "exit")
  rmSync(directory, { recursive: true, force: true })
}
