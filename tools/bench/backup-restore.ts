/**
 * Backups and restores of a store of 1,000,000 pets, beside the tools an operator would compare
 * them with, on the same machine and the same rows:
 *
 * 1. `storage backup` of the SQLite file, beside `sqlite3`'s `.backup` and `VACUUM INTO` of it;
 * 2. `storage restore` of that backup into a new PostgreSQL database, beside `psql`'s `\copy` of
 *    the same rows into a database of the same schema; then `storage backup` of PostgreSQL;
 * 3. what back-to-back backups do to a server on the store: creates' and lists' latency at 32
 *    connections, against the same load with no backup (load-worker.ts, as http-bench.ts runs it).
 *
 * The commands are the built ones (apps/server/dist: `npx turbo run build` first), each pinned to
 * core 0, interleaved round by round. Everything it makes (a temporary folder, PostgreSQL
 * databases named after this process) is removed at the end, on a failure, on Ctrl-C and at its
 * deadline. A full run writes results/backup-restore.json and the block of RESULTS.md between its
 * `backup-restore:results` markers; a quick run (100,000 pets, one round) prints its block only.
 *
 *   npm run backup-restore -w @petstore/bench                  # about 8 minutes
 *   BENCH_QUICK=1 npm run backup-restore -w @petstore/bench    # about 2 minutes
 *   npm run backup-restore -w @petstore/bench -- --render      # the block again from the JSON
 *
 * Settings (environment): BENCH_BACKUP_PETS, BENCH_BACKUP_ROUNDS (parts 1 and 2),
 * BENCH_IMPACT_ROUNDS, BENCH_IMPACT_SECONDS (measured), BENCH_WARMUP (seconds), BENCH_CONNECTIONS,
 * BENCH_BACKUP_POSTGRES (1, or 0 to skip PostgreSQL), BENCH_DEADLINE_MINUTES,
 * PETSTORE_BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/postgres).
 */
import { execFileSync, type ChildProcess } from "node:child_process"
import {
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { PageCursor, PetId } from "@petstore/core"
import { Effect, Either, Schema } from "effect"
import {
  decodeReport,
  renderBlock,
  targetResults,
  tools,
  type Condition,
  type ImpactRun,
  type Report,
  type Timing,
} from "./backup-restore-report.js"
import { numberSetting, quick } from "./bench-settings.js"
import { environment, repoRoot, serviceBuild, versions } from "./http-bench-environment.js"
import type { LoadCounts, LoadPlan, LoadRequest } from "./load-plan.js"
import { startLoadWorker, startServer, type LoadWorker } from "./processes.js"
import { checkOwnBlock, formatted, writeOwnBlock } from "./results-markdown.js"
import {
  adminUrl,
  dropDatabasesSync,
  migrate,
  postgresStore,
  sqliteStore,
  type BenchStore,
} from "./stores.js"
import { gnuTime, runTimed, spawnTracked } from "./timed-commands.js"

const settings = {
  pets: numberSetting("BENCH_BACKUP_PETS", quick ? 100_000 : 1_000_000),
  rounds: numberSetting("BENCH_BACKUP_ROUNDS", quick ? 1 : 5),
  impactRounds: numberSetting("BENCH_IMPACT_ROUNDS", quick ? 1 : 3),
  impactSeconds: numberSetting("BENCH_IMPACT_SECONDS", quick ? 3 : 6),
  warmupSeconds: numberSetting("BENCH_WARMUP", quick ? 1 : 2),
  connections: numberSetting("BENCH_CONNECTIONS", 32),
  postgres: numberSetting("BENCH_BACKUP_POSTGRES", 1) === 1,
}
const deadlineMinutes = numberSetting("BENCH_DEADLINE_MINUTES", quick ? 5 : 15)
/** Backups of PostgreSQL, for the record: each takes about as long as a restore. */
const postgresBackupRounds = Math.min(settings.rounds, 3)
const commandCore = 0
const loadCore = 1

const benchDir = fileURLToPath(new URL(".", import.meta.url))
const resultsJson = path.join(benchDir, "results", "backup-restore.json")
const block = "backup-restore:results"
const distMain = path.join(repoRoot, "apps/server/dist/main.js")
const storageCli = path.join(repoRoot, "apps/server/dist/cli/storage.js")
const apiKey = "bench-key-0123456789"

const benchStarted = Date.now()
const log = (message: string) => {
  const seconds = Math.round((Date.now() - benchStarted) / 1000)
  process.stderr.write(
    `[${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}] ${message}\n`,
  )
}

// ---------------------------------------------------------------------------------------------
// What it needs, checked before anything is made

const checkTools = () => {
  const problems: Array<string> = []
  const probe = (what: string, command: string, args: ReadonlyArray<string>) => {
    try {
      execFileSync(command, args, { stdio: "ignore", timeout: 10_000 })
    } catch {
      problems.push(what)
    }
  }
  probe(`taskset on cores ${commandCore} and ${loadCore}`, "taskset", [
    "-c",
    `${commandCore},${loadCore}`,
    "true",
  ])
  probe(`GNU time (${gnuTime})`, gnuTime, ["-f", "%U", "true"])
  probe("sqlite3", "sqlite3", ["-version"])
  if (settings.postgres)
    probe(`psql reaching ${adminUrl}`, "psql", ["-X", "-d", adminUrl, "-c", "SELECT 1"])
  for (const built of [distMain, storageCli])
    if (!existsSync(built))
      problems.push(`${path.relative(repoRoot, built)} (run npx turbo run build first)`)
  if (problems.length > 0)
    throw new Error(
      `backup-restore.ts needs what it could not find or run: ${problems.join("; ")}. Nothing was measured.`,
    )
}

const versionOf = (command: string, args: ReadonlyArray<string>) =>
  execFileSync(command, args, { encoding: "utf8" }).trim().split(/\s+/).slice(0, 3).join(" ")

// ---------------------------------------------------------------------------------------------
// Cleaning up: the folder, the seed store and the databases, whatever ends the run

/** The run's folder: the copies, the backups, the CSV. Made by `main`. */
let directory = ""
const cleanups: Array<() => void> = []
process.on("exit", () => {
  for (const cleanup of cleanups) {
    try {
      cleanup()
    } catch (error) {
      process.stderr.write(`cleaning up: ${error instanceof Error ? error.message : error}\n`)
    }
  }
})

// ---------------------------------------------------------------------------------------------
// The store

/** Statuses in turn (a quarter without one), a hundred categories: one statement. */
const seedSql = (count: number) => `
  WITH RECURSIVE sequence(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM sequence WHERE n < ${count - 1})
  INSERT INTO pets (name, category_id, status)
  SELECT 'pet ' || n, n % 100,
    CASE n % 4 WHEN 0 THEN 'available' WHEN 1 THEN 'pending' WHEN 2 THEN 'sold' END
  FROM sequence`

const seedStore = async () => {
  const store = sqliteStore()
  cleanups.push(() => rmSync(path.dirname(store.filename), { recursive: true, force: true }))
  const started = performance.now()
  await migrate(store)
  await store.run((sql) => sql.unsafe(seedSql(settings.pets)))
  const seedSeconds = (performance.now() - started) / 1000
  const sqliteVersion = await store.run((sql) =>
    Effect.map(sql`SELECT sqlite_version() AS version`, (rows) => String(rows[0]?.["version"])),
  )
  // The last connection's close checkpointed the WAL into the file: the file alone is the store.
  if (existsSync(`${store.filename}-wal`))
    throw new Error(`${store.filename}-wal is still there after seeding`)
  return { store, seedSeconds, sqliteVersion, storeBytes: statSync(store.filename).size }
}

/** The `… 12345 bytes, 0.35 s; …` of a storage command's summary line. */
const summaryFigures = (stdout: string) => {
  const found = /, (\d+) bytes, (\d+(?:\.\d+)?) s;/.exec(stdout)
  if (found === null) throw new Error(`no summary line in: ${stdout.trim()}`)
  return { bytes: Number(found[1]), seconds: Number(found[2]) }
}

/** The round's order: each round starts one further along, so none is always first. */
const rotated = <A>(items: ReadonlyArray<A>, round: number): ReadonlyArray<A> => {
  const start = round % items.length
  return [...items.slice(start), ...items.slice(0, start)]
}

const storage = (...args: ReadonlyArray<string>) => [storageCli, ...args]

// ---------------------------------------------------------------------------------------------
// 1. Backups of the SQLite store

const sqliteBackups = async (seed: string, seedFile: string) => {
  const timings: Array<Timing> = []
  const source = path.join(directory, "source.backup")
  let backupBytes = 0
  const env = { PETSTORE_STORAGE: seed }
  for (let round = 0; round < settings.rounds; round++) {
    for (const tool of rotated([tools.backup, tools.dotBackup, tools.vacuumInto], round)) {
      const file = path.join(directory, `round-${round}.db`)
      const timed =
        tool === tools.backup
          ? await runTimed({
              command: process.execPath,
              args: storage("backup", file),
              core: commandCore,
              env,
              cwd: repoRoot,
              timeoutSeconds: 120,
            })
          : await runTimed({
              command: "sqlite3",
              args: [
                seedFile,
                tool === tools.dotBackup ? `.backup '${file}'` : `VACUUM INTO '${file}'`,
              ],
              core: commandCore,
              timeoutSeconds: 120,
            })
      const summary = tool === tools.backup ? summaryFigures(timed.stdout) : undefined
      timings.push({
        tool,
        round,
        wallSeconds: timed.wallSeconds,
        cpuSeconds: timed.cpuSeconds,
        ...(summary === undefined ? {} : { reportedSeconds: summary.seconds }),
      })
      if (summary !== undefined && !existsSync(source)) {
        copyFileSync(file, source)
        backupBytes = summary.bytes
      }
      rmSync(file, { force: true })
    }
    log(`  round ${round + 1} of ${settings.rounds}`)
  }
  return { timings, source, backupBytes }
}

// ---------------------------------------------------------------------------------------------
// 2. Restores into PostgreSQL, and backups of it

/** The store's rows as CSV, as `\copy` reads them (an empty unquoted field is NULL). */
const exportCsv = (seedFile: string) => {
  const csv = path.join(directory, "pets.csv")
  const output = openSync(csv, "w")
  try {
    execFileSync(
      "sqlite3",
      ["-csv", seedFile, "SELECT id, name, category_id, status FROM pets ORDER BY id"],
      { stdio: ["ignore", output, "inherit"], timeout: 120_000 },
    )
  } finally {
    closeSync(output)
  }
  return csv
}

const postgresRestores = async (source: string, csv: string) => {
  const timings: Array<Timing> = []
  let restored: (BenchStore & { readonly database: string }) | undefined
  for (let round = 0; round < settings.rounds; round++) {
    for (const tool of rotated([tools.restore, tools.copy], round)) {
      const target = await postgresStore()
      let keep = false
      try {
        if (tool === tools.restore) {
          const timed = await runTimed({
            command: process.execPath,
            args: storage("restore", source),
            core: commandCore,
            env: { PETSTORE_STORAGE: target.storage },
            cwd: repoRoot,
            database: target.database,
            timeoutSeconds: 300,
          })
          timings.push({
            tool,
            round,
            wallSeconds: timed.wallSeconds,
            cpuSeconds: timed.cpuSeconds,
            backendCpuSeconds: timed.backendCpuSeconds ?? Number.NaN,
            reportedSeconds: summaryFigures(timed.stdout).seconds,
          })
          // The last restore is the store part 3 and the PostgreSQL backups work on.
          if (round === settings.rounds - 1) {
            restored = target
            keep = true
          }
        } else {
          await migrate(target)
          const timed = await runTimed({
            command: "psql",
            args: [
              "-X",
              "-v",
              "ON_ERROR_STOP=1",
              "-d",
              target.storage,
              "-c",
              `\\copy pets (id, name, category_id, status) FROM '${csv}' WITH (FORMAT csv)`,
            ],
            core: commandCore,
            database: target.database,
            timeoutSeconds: 300,
          })
          if (timed.stdout.trim() !== `COPY ${settings.pets}`)
            throw new Error(`\\copy said ${timed.stdout.trim()}, not COPY ${settings.pets}`)
          timings.push({
            tool,
            round,
            wallSeconds: timed.wallSeconds,
            cpuSeconds: timed.cpuSeconds,
            backendCpuSeconds: timed.backendCpuSeconds ?? Number.NaN,
          })
        }
      } finally {
        if (!keep) await target.dispose()
      }
    }
    log(`  round ${round + 1} of ${settings.rounds}`)
  }
  if (restored === undefined) throw new Error("no restore was kept")
  return { timings, restored }
}

const postgresBackups = async (restored: BenchStore & { readonly database: string }) => {
  const timings: Array<Timing> = []
  for (let round = 0; round < postgresBackupRounds; round++) {
    const file = path.join(directory, `postgres-${round}.backup`)
    const timed = await runTimed({
      command: process.execPath,
      args: storage("backup", file),
      core: commandCore,
      env: { PETSTORE_STORAGE: restored.storage },
      cwd: repoRoot,
      database: restored.database,
      timeoutSeconds: 300,
    })
    rmSync(file, { force: true })
    timings.push({
      tool: tools.backup,
      round,
      wallSeconds: timed.wallSeconds,
      cpuSeconds: timed.cpuSeconds,
      backendCpuSeconds: timed.backendCpuSeconds ?? Number.NaN,
      reportedSeconds: summaryFigures(timed.stdout).seconds,
    })
  }
  return timings
}

// ---------------------------------------------------------------------------------------------
// 3. A server under load, with and without backups

/**
 * `storage backup` one after another, pinned to `core`, until `stop`, which interrupts the one
 * running (SIGTERM: it removes its partial file). Each writes a new file, removed once written;
 * with `refused`, each names a file that exists, so the command starts, loads its modules, is
 * refused and exits without touching the store: what starting it costs, alone.
 */
const backUpContinuously = (store: string, core: number, refused: boolean) => {
  const existing = path.join(directory, "existing.backup")
  if (refused) writeFileSync(existing, "")
  let stopping = false
  let current: ChildProcess | undefined
  const finished: Array<number> = []
  const loop = async () => {
    for (let n = 0; !stopping; n++) {
      const file = refused ? existing : path.join(directory, `during-${n}.backup`)
      const started = performance.now()
      const child = spawnTracked(
        "taskset",
        ["-c", String(core), process.execPath, ...storage("backup", file)],
        { cwd: repoRoot, env: { ...process.env, PETSTORE_STORAGE: store } },
      )
      current = child
      let stderr = ""
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
      const code = await new Promise<number | null>((resolve) =>
        child.once("close", (exitCode) => resolve(exitCode)),
      )
      if (!refused) rmSync(file, { force: true })
      if (code === (refused ? 1 : 0)) finished.push((performance.now() - started) / 1000)
      else if (!stopping) throw new Error(`a backup under load exited ${code}: ${stderr.trim()}`)
    }
  }
  const running = loop()
  // Seen when `stop` is awaited; until then a failure must not go unhandled.
  running.catch(() => {})
  return {
    stop: async (): Promise<ReadonlyArray<number>> => {
      stopping = true
      if (current !== undefined && current.exitCode === null && current.signalCode === null)
        current.kill("SIGTERM")
      await running
      return finished
    },
  }
}

const encodeCursor = Schema.encodeSync(PageCursor)
const authorization = { Authorization: `Bearer ${apiKey}` }

const plans = (origin: string): Record<ImpactRun["scenario"], LoadPlan> => {
  const base = {
    origin,
    connections: settings.connections,
    warmupSeconds: settings.warmupSeconds,
    seconds: settings.impactSeconds,
  }
  const create: LoadRequest = {
    method: "POST",
    path: "/v1/pets",
    headers: { ...authorization, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
  }
  const list = (index: number): LoadRequest => {
    const after = Math.max(1, Math.floor(((index + 0.5) / 64) * settings.pets))
    return {
      method: "GET",
      path: `/v1/pets?limit=20&cursor=${encodeURIComponent(encodeCursor(PetId.make(after)))}`,
      headers: authorization,
    }
  }
  return {
    creates: { ...base, requests: [create] },
    lists: { ...base, requests: [list(0), ...Array.from({ length: 63 }, (_, i) => list(i + 1))] },
  }
}

interface ImpactStore {
  readonly engine: ImpactRun["engine"]
  /** A fresh copy of the store of `settings.pets` pets, for one run. */
  readonly copy: () => Promise<{ readonly storage: string; readonly dispose: () => Promise<void> }>
  readonly conditions: ReadonlyArray<Condition>
}

const measureImpact = async (load: LoadWorker, store: ImpactStore, round: number) => {
  const runs: Array<ImpactRun> = []
  const cases = (["creates", "lists"] as const).flatMap((scenario) =>
    store.conditions.map((condition) => ({ scenario, condition })),
  )
  for (const { scenario, condition } of rotated(cases, round)) {
    const copy = await store.copy()
    try {
      const server = await startServer(
        {
          name: `service on ${store.engine}`,
          args: [distMain],
          cwd: repoRoot,
          env: {
            PETSTORE_STORAGE: copy.storage,
            PETSTORE_API_KEYS: apiKey,
            PETSTORE_LOG_LEVEL: "warn",
            PETSTORE_RATE_LIMIT: "off",
            PETSTORE_AUTH_FAILURE_LIMIT: "off",
            PORT: "0",
            HOST: "127.0.0.1",
          },
        },
        commandCore,
      )
      try {
        const backups =
          condition === "idle"
            ? undefined
            : backUpContinuously(copy.storage, commandCore, condition === "starting only")
        let backupSeconds: ReadonlyArray<number> = []
        let counts: LoadCounts
        try {
          counts = (await load.run(plans(server.origin)[scenario], server)).counts
        } finally {
          if (backups !== undefined) backupSeconds = await backups.stop()
        }
        runs.push({
          engine: store.engine,
          scenario,
          condition,
          round,
          requestsPerSecond: counts.responses / counts.duration,
          latencyP50: counts.latencyP50,
          latencyP99: counts.latencyP99,
          failures: counts.non2xx + counts.errors,
          statusCodes: counts.statusCodes ?? {},
          errors: counts.errors,
          backupSeconds,
        })
        log(
          `  ${store.engine}, ${scenario}, ${condition}: p99 ${counts.latencyP99} ms, ${Math.round(counts.responses / counts.duration)} req/s${backups === undefined ? "" : `, ${backupSeconds.length} commands finished`}; ${JSON.stringify(counts.statusCodes)}, ${counts.errors} errors`,
        )
      } finally {
        await server.stop()
      }
    } finally {
      await copy.dispose()
    }
  }
  return runs
}

const sqliteCopies = (seedFile: string): ImpactStore => {
  let copies = 0
  return {
    engine: "SQLite",
    conditions: ["idle", "backing up", "starting only"],
    copy: async () => {
      const file = path.join(directory, `serving-${++copies}.db`)
      copyFileSync(seedFile, file)
      return {
        storage: `file:${file}`,
        dispose: async () => {
          for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true })
        },
      }
    },
  }
}

const postgresCopies = (template: string): ImpactStore => ({
  engine: "PostgreSQL",
  conditions: ["idle", "backing up"],
  copy: async () => postgresStore({ template }),
})

// ---------------------------------------------------------------------------------------------

/** `--render`: the block written again from results/backup-restore.json, measuring nothing. */
const render = async () => {
  const report = decodeReport(readFileSync(resultsJson, "utf8"))
  if (Either.isLeft(report))
    throw new Error(
      `${path.relative(repoRoot, resultsJson)} is not a report this script reads (run it again): ${report.left}`,
    )
  await writeOwnBlock(block, renderBlock(report.right))
  log(
    `wrote the block of tools/bench/RESULTS.md again from ${path.relative(repoRoot, resultsJson)}`,
  )
}

const main = async () => {
  if (process.argv.includes("--render")) return render()
  checkTools()
  if (!quick) checkOwnBlock(block)
  directory = mkdtempSync(path.join(tmpdir(), "petstore-backup-bench-"))
  cleanups.push(() => rmSync(directory, { recursive: true, force: true }))
  if (settings.postgres) cleanups.push(dropDatabasesSync)
  const build = serviceBuild()
  for (const warning of build.warnings) log(`warning: ${warning}`)
  const watchdog = setTimeout(() => {
    log(`backup-restore: still running after ${deadlineMinutes} minutes; stopping`)
    process.exit(1)
  }, deadlineMinutes * 60_000)
  const started = Date.now()
  log(
    `backup-restore: ${settings.pets.toLocaleString("en")} pets, ${settings.rounds} round(s); the server ${settings.impactRounds} round(s) of ${settings.warmupSeconds} s + ${settings.impactSeconds} s at ${settings.connections} connections${settings.postgres ? "" : "; PostgreSQL skipped"}`,
  )
  const { store: seed, seedSeconds, sqliteVersion, storeBytes } = await seedStore()
  log(
    `seeded ${settings.pets.toLocaleString("en")} pets into SQLite in ${seedSeconds.toFixed(1)} s`,
  )

  log("1. backups of the SQLite store")
  const sqlite = await sqliteBackups(seed.storage, seed.filename)

  let restores: ReadonlyArray<Timing> = []
  let pgBackups: ReadonlyArray<Timing> = []
  let restored: (BenchStore & { readonly database: string }) | undefined
  if (settings.postgres) {
    log("2. restores into PostgreSQL")
    const csv = exportCsv(seed.filename)
    const result = await postgresRestores(sqlite.source, csv)
    restores = result.timings
    restored = result.restored
    log("   backups of PostgreSQL")
    pgBackups = await postgresBackups(restored)
  }

  log("3. a server under load, with and without backups")
  const stores = [
    sqliteCopies(seed.filename),
    ...(restored === undefined ? [] : [postgresCopies(restored.database)]),
  ]
  const load = startLoadWorker(loadCore)
  const impact: Array<ImpactRun> = []
  try {
    for (let round = 0; round < settings.impactRounds; round++)
      for (const store of rotated(stores, round))
        impact.push(...(await measureImpact(load, store, round)))
  } finally {
    await load.stop()
  }
  await restored?.dispose()
  await seed.dispose()
  clearTimeout(watchdog)

  const machine = environment()
  const report: Report = {
    date: new Date().toISOString(),
    command: quick
      ? "BENCH_QUICK=1 npm run backup-restore -w @petstore/bench"
      : "npm run backup-restore -w @petstore/bench",
    minutes: (Date.now() - started) / 60_000,
    settings,
    machine: `${machine.nproc} CPUs (${machine.cpuModel}), shared with other work, ${machine.memoryGiB} GiB, Linux ${machine.kernel}; Node ${machine.node}`,
    versions: {
      "SQLite (better-sqlite3, in the CLI and the server)": sqliteVersion,
      sqlite3: versionOf("sqlite3", ["-version"]).split(" ")[0] ?? "",
      ...(settings.postgres
        ? {
            psql: versionOf("psql", ["--version"]).split(" ").at(-1) ?? "",
            PostgreSQL:
              execFileSync(
                "psql",
                ["-X", "-A", "-t", "-d", adminUrl, "-c", "SHOW server_version"],
                { encoding: "utf8" },
              )
                .trim()
                .split(" ")[0] ?? "",
          }
        : {}),
      autocannon: versions()["autocannon"] ?? "",
    },
    warnings: build.warnings,
    seedSeconds,
    storeBytes,
    backupBytes: sqlite.backupBytes,
    sqliteBackups: sqlite.timings,
    postgresRestores: restores,
    postgresBackups: pgBackups,
    impact,
  }
  const text = renderBlock(report)
  if (!quick) {
    mkdirSync(path.dirname(resultsJson), { recursive: true })
    writeFileSync(resultsJson, await formatted(resultsJson, JSON.stringify(report)))
    await writeOwnBlock(block, text)
  }
  process.stdout.write(`${text}\n\n`)
  for (const result of targetResults(report))
    log(`target: ${result.target}: ${result.status} (${result.figure})`)
  log(
    quick
      ? `done in ${report.minutes.toFixed(1)} minutes (quick: RESULTS.md left as it was)`
      : `wrote tools/bench/RESULTS.md and tools/bench/results/backup-restore.json in ${report.minutes.toFixed(1)} minutes`,
  )
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(
      `backup-restore failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
    process.exit(1)
  },
)
