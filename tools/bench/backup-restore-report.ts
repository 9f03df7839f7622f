/**
 * The figures backup-restore.ts gathers (results/backup-restore.json), the targets they are read
 * against, and the Markdown block it writes into RESULTS.md between its `backup-restore:results`
 * markers.
 */
import { Either, Schema } from "effect"
import { format, median, show, spread, table } from "./statistics.js"

/** One timed command: one tool, one round. */
export const Timing = Schema.Struct({
  tool: Schema.String,
  round: Schema.Number,
  wallSeconds: Schema.Number,
  /** The command's own CPU time (user + system, every thread). */
  cpuSeconds: Schema.Number,
  /** The CPU time of the PostgreSQL backends serving it, when it worked on PostgreSQL. */
  backendCpuSeconds: Schema.optional(Schema.Number),
  /** The seconds `storage backup` and `restore` state in their summary line (their own work). */
  reportedSeconds: Schema.optional(Schema.Number),
})
export type Timing = typeof Timing.Type

/**
 * Idle: the server alone on its core. Backing up: `storage backup` one after another on the
 * server's core. Starting only: the same command, refused at once (its file exists), one after
 * another: its start alone.
 */
export const conditions = ["idle", "backing up", "starting only"] as const
export const Condition = Schema.Literal(...conditions)
export type Condition = typeof Condition.Type

/** The load on a server during one measured run, with or without backups on its core. */
export const ImpactRun = Schema.Struct({
  engine: Schema.Literal("SQLite", "PostgreSQL"),
  scenario: Schema.Literal("creates", "lists"),
  condition: Condition,
  round: Schema.Number,
  requestsPerSecond: Schema.Number,
  latencyP50: Schema.Number,
  latencyP99: Schema.Number,
  /** Answers other than 2xx, and connection errors (timeouts included): none is expected. */
  failures: Schema.Number,
  /** Responses by status code. */
  statusCodes: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** Connection errors, timeouts included. */
  errors: Schema.Number,
  /** The wall seconds of each command finished during the run (its warm-up included). */
  backupSeconds: Schema.Array(Schema.Number),
})
export type ImpactRun = typeof ImpactRun.Type

export const Report = Schema.Struct({
  /** When the run ended (ISO 8601): kept here, not in RESULTS.md. */
  date: Schema.String,
  command: Schema.String,
  minutes: Schema.Number,
  settings: Schema.Struct({
    pets: Schema.Number,
    rounds: Schema.Number,
    impactRounds: Schema.Number,
    impactSeconds: Schema.Number,
    warmupSeconds: Schema.Number,
    connections: Schema.Number,
    postgres: Schema.Boolean,
  }),
  machine: Schema.String,
  versions: Schema.Record({ key: Schema.String, value: Schema.String }),
  warnings: Schema.Array(Schema.String),
  seedSeconds: Schema.Number,
  /** The SQLite store's size as seeded. */
  storeBytes: Schema.Number,
  /** The size of the backup `storage backup` wrote of it. */
  backupBytes: Schema.Number,
  sqliteBackups: Schema.Array(Timing),
  postgresRestores: Schema.Array(Timing),
  postgresBackups: Schema.Array(Timing),
  impact: Schema.Array(ImpactRun),
})
export type Report = typeof Report.Type

/** A results file's text as a report, or why it is not one. */
export const decodeReport = (json: string): Either.Either<Report, string> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(Schema.parseJson(Report))(json),
    (error) => error.message,
  )

export const tools = {
  backup: "`storage backup`",
  dotBackup: "`sqlite3 .backup`",
  vacuumInto: "`sqlite3 VACUUM INTO`",
  restore: "`storage restore`",
  copy: "`psql \\copy`",
} as const

export type Status = "met" | "missed" | "not measured"

export interface TargetResult {
  readonly target: string
  readonly status: Status
  readonly figure: string
}

const of = (timings: ReadonlyArray<Timing>, tool: string) =>
  timings.filter((timing) => timing.tool === tool)

/** Per-round ratios of `a`'s figure to `b`'s. */
const roundRatios = (
  as: ReadonlyArray<Timing>,
  bs: ReadonlyArray<Timing>,
  figure: (timing: Timing) => number | undefined,
) =>
  as.flatMap((a) => {
    const b = bs.find((timing) => timing.round === a.round)
    const x = figure(a)
    const y = b === undefined ? undefined : figure(b)
    return x === undefined || y === undefined ? [] : [x / y]
  })

const wall = (timing: Timing) => timing.wallSeconds
const own = (timing: Timing) => timing.reportedSeconds ?? timing.wallSeconds
const times = (values: ReadonlyArray<number>) =>
  values.length === 0 ? "—" : show(spread(values), 2, "×")
const seconds = (values: ReadonlyArray<number | undefined>) => {
  const known = values.filter((value): value is number => value !== undefined)
  return known.length === 0 ? "—" : show(spread(known), 2)
}
const megabytes = (bytes: number) => `${format(bytes / 1e6, 1)} MB`
const count = (value: number) => value.toLocaleString("en")

export const backupTarget = (report: Report): TargetResult => {
  const backups = of(report.sqliteBackups, tools.backup)
  const overDot = median(roundRatios(backups, of(report.sqliteBackups, tools.dotBackup), wall))
  const overVacuum = median(roundRatios(backups, of(report.sqliteBackups, tools.vacuumInto), wall))
  const ownOverDot = median(roundRatios(backups, of(report.sqliteBackups, tools.dotBackup), own))
  return {
    target: `A backup of ${count(report.settings.pets)} pets from SQLite ≤ 2× \`sqlite3\`'s \`.backup\` and \`VACUUM INTO\` of the same file (wall time, medians)`,
    status: Number.isNaN(overDot)
      ? "not measured"
      : overDot <= 2 && overVacuum <= 2
        ? "met"
        : "missed",
    figure: `${format(overDot, 2)}× \`.backup\`, ${format(overVacuum, 2)}× \`VACUUM INTO\`; the copy alone, by its summary line, ${format(ownOverDot, 2)}× \`.backup\``,
  }
}

export const restoreTarget = (report: Report): TargetResult => {
  const restores = of(report.postgresRestores, tools.restore)
  const ratio = median(roundRatios(restores, of(report.postgresRestores, tools.copy), wall))
  const ownRatio = median(roundRatios(restores, of(report.postgresRestores, tools.copy), own))
  return {
    target: `A restore of ${count(report.settings.pets)} pets into PostgreSQL ≤ 2× \`psql \\copy\` of the same rows (wall time, medians)`,
    status: Number.isNaN(ratio) ? "not measured" : ratio <= 2 ? "met" : "missed",
    figure: Number.isNaN(ratio)
      ? "PostgreSQL skipped"
      : `${format(ratio, 2)}×; by its summary line ${format(ownRatio, 2)}×`,
  }
}

const targetLine = (result: TargetResult) =>
  `Target: ${result.target} — **${result.status}** (latest: ${result.figure}).`

const timingTable = (
  timings: ReadonlyArray<Timing>,
  toolNames: ReadonlyArray<string>,
  withBackend: boolean,
) =>
  table(
    [
      "command",
      "wall s",
      "its own CPU s",
      ...(withBackend ? ["PostgreSQL backend CPU s"] : []),
      "its summary's s",
    ],
    toolNames.map((tool) => {
      const runs = of(timings, tool)
      return [
        tool,
        seconds(runs.map(wall)),
        seconds(runs.map((timing) => timing.cpuSeconds)),
        ...(withBackend ? [seconds(runs.map((timing) => timing.backendCpuSeconds))] : []),
        seconds(runs.map((timing) => timing.reportedSeconds)),
      ]
    }),
  )

const impactTable = (report: Report) => {
  const rows: Array<Array<string>> = []
  for (const engine of ["SQLite", "PostgreSQL"] as const) {
    for (const scenario of ["creates", "lists"] as const) {
      const runsOf = (condition: Condition) =>
        report.impact.filter(
          (run) =>
            run.engine === engine && run.scenario === scenario && run.condition === condition,
        )
      const idle = runsOf("idle")
      for (const condition of conditions) {
        const runs = runsOf(condition)
        if (runs.length === 0) continue
        const p99Ratios = runs.flatMap((run) => {
          const same = idle.find((other) => other.round === run.round)
          return same === undefined ? [] : [run.latencyP99 / same.latencyP99]
        })
        const backups = runs.flatMap((run) => run.backupSeconds)
        rows.push([
          condition === "idle" ? engine : "",
          condition === "idle" ? scenario : "",
          condition,
          show(spread(runs.map((run) => run.requestsPerSecond)), 0),
          `${show(spread(runs.map((run) => run.latencyP50)), 0)} ms`,
          `${show(spread(runs.map((run) => run.latencyP99)), 0)} ms`,
          condition === "idle" ? "" : times(p99Ratios),
          condition === "idle"
            ? ""
            : backups.length === 0
              ? "none finished (one ran throughout)"
              : `${format(backups.length / runs.length, 1)}, ${format(median(backups), 2)} s`,
          failures(runs),
        ])
      }
    }
  }
  return table(
    [
      "store",
      "requests",
      "while",
      "req/s",
      "p50",
      "p99",
      "p99 ÷ idle",
      "commands finished a run, median s each",
      "failures",
    ],
    rows,
  )
}

/** How many requests failed over `runs`, and how: `0`, or `12 (503 ×9, 3 errors)`. */
const failures = (runs: ReadonlyArray<ImpactRun>) => {
  const total = runs.reduce((sum, run) => sum + run.failures, 0)
  if (total === 0) return "0"
  const byStatus = new Map<string, number>()
  for (const run of runs)
    for (const [code, responses] of Object.entries(run.statusCodes))
      if (!code.startsWith("2")) byStatus.set(code, (byStatus.get(code) ?? 0) + responses)
  const errors = runs.reduce((sum, run) => sum + run.errors, 0)
  const how = [
    ...[...byStatus].map(([code, responses]) => `${code} ×${count(responses)}`),
    ...(errors > 0 ? [`${count(errors)} connection errors`] : []),
  ]
  return `${count(total)} (${how.join(", ")})`
}

/** The block between RESULTS.md's `backup-restore:results` markers. */
export const renderBlock = (report: Report): string => {
  const { settings } = report
  const pets = count(settings.pets)
  const parts = [
    `\`${report.command}\` (\`backup-restore.ts\`) in ${format(report.minutes, 1)} minutes; every round's figures are in \`results/backup-restore.json\`. Machine: ${report.machine}. Versions: ${Object.entries(
      report.versions,
    )
      .map(([name, version]) => `${name} ${version}`)
      .join(", ")}.`,
    ...report.warnings.map((warning) => `> **Warning:** ${warning}.`),
    `The SQLite store: ${pets} pets (names \`pet <n>\`, a hundred categories, the statuses in turn, a quarter without), inserted by one \`INSERT … SELECT\` into the schema the server's migrations made, in ${format(report.seedSeconds, 1)} s: ${megabytes(report.storeBytes)}, its backup ${megabytes(report.backupBytes)}. \`storage\` is the built CLI (\`node apps/server/dist/cli/storage.js\`, as the README's scheduled job runs it; \`npm run storage\` adds a build check); wall time is from its start to its exit, Node's start included; "its summary's s" is what its summary line states, its own work from its start to its file written. Each command runs pinned to core 0 (\`taskset\`), the tools interleaved in ${settings.rounds} rounds; medians, (min–max) beside them.`,
    `Backups of the SQLite store, each into a new file, the page cache warm:`,
    timingTable(report.sqliteBackups, [tools.backup, tools.dotBackup, tools.vacuumInto], false),
    targetLine(backupTarget(report)),
  ]
  if (settings.postgres) {
    parts.push(
      `Restores of those ${pets} pets into a new PostgreSQL database: \`storage restore\` of the backup above; \`psql \\copy pets (id, name, category_id, status) FROM\` a CSV of the same rows (exported by \`sqlite3 -csv\`, not timed) into a database the same migrations made (the same indexes, constraints and trigger; one \`COPY\`, so one transaction, as the restore is). The backend's CPU is read from /proc while the command runs.`,
      timingTable(report.postgresRestores, [tools.restore, tools.copy], true),
      targetLine(restoreTarget(report)),
      `For the record, \`storage backup\` of that PostgreSQL database (${report.postgresBackups.length} in a row):`,
      timingTable(report.postgresBackups, [tools.backup], true),
    )
  }
  parts.push(
    `What back-to-back backups do to a server on that store: the built server (\`apps/server/dist/main.js\`, \`PETSTORE_LOG_LEVEL=warn\`, \`PETSTORE_RATE_LIMIT=off\`) pinned to core 0 on a fresh copy of the ${pets}-pet store for every run (SQLite: the file copied; PostgreSQL: \`CREATE DATABASE … TEMPLATE\` of the restored database; its own processes unpinned), autocannon pinned to core 1, ${settings.connections} connections, ${format(settings.warmupSeconds, 0)} s of warm-up and ${format(settings.impactSeconds, 0)} s measured. Creates: \`POST /v1/pets\`. Lists: \`GET /v1/pets?limit=20\` from 64 cursors spread over the store, in turn. "backing up": \`storage backup\` one after another, each into a new file, pinned to core 0 with the server (on core 1 it would slow the load generator, and the latency it measures); "starting only": the same command one after another, refused at once because its file exists: Node's start and the command's modules, nothing read. ${settings.impactRounds} round(s), the conditions interleaved in each; "p99 ÷ idle" is the median of the per-round ratios; a command's seconds include its start.`,
    impactTable(report),
  )
  return parts.join("\n\n")
}

/** The targets' lines, for the console. */
export const targetResults = (report: Report): ReadonlyArray<TargetResult> => [
  backupTarget(report),
  ...(report.settings.postgres ? [restoreTarget(report)] : []),
]
