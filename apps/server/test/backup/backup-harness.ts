import assert from "node:assert/strict"
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process"
import { createHash } from "node:crypto"
import { once } from "node:events"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect, Redacted, type Scope } from "effect"
import type { PetBody } from "../harness.js"
import { startServerProcess, type RunningServer } from "../server-process.js"
import { builtEntry } from "../built-entry.js"

/**
 * What the backup tests share: the `storage` CLI and the server, each run as a process (as
 * `npm run storage` and `npm start` run them, built), and reading a store's tables directly.
 */

const appDirectory = fileURLToPath(new URL("../..", import.meta.url))

/** The key every test server accepts (`PETSTORE_API_KEYS`). */
export const apiKey = "backup-test-key"

/** The most a test that runs processes may take. */
export const processTestTimeout = 120_000

const running = new Set<ChildProcessWithoutNullStreams>()
process.on("exit", () => running.forEach((child) => child.kill("SIGKILL")))

export interface CliResult {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
}

export interface CliProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<CliResult>
}

const quoted = (argument: string) => `'${argument.replaceAll("'", `'\\''`)}'`

/**
 * Starts `npm run storage -- <args>` on `storage` (`PETSTORE_STORAGE`), its output piped; with
 * `terminal`, inside a pseudo-terminal (`script`), whose output (stdout and stderr together) is
 * what a person would see.
 */
export const spawnStorageCli = (
  args: ReadonlyArray<string>,
  storage: string,
  options: { readonly terminal?: boolean } = {},
): CliProcess => {
  const command = [process.execPath, ...builtEntry("cli/storage"), ...args]
  const [file, ...rest] =
    options.terminal === true
      ? ["script", "-qefc", command.map(quoted).join(" "), "/dev/null"]
      : command
  const child = spawn(file ?? process.execPath, rest, {
    cwd: appDirectory,
    env: { PATH: process.env["PATH"] ?? "", PETSTORE_STORAGE: storage, TERM: "xterm" },
    stdio: ["pipe", "pipe", "pipe"],
  })
  running.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = once(child, "exit").then(([code, signal]: Array<unknown>) => {
    running.delete(child)
    return {
      code: typeof code === "number" ? code : null,
      signal: typeof signal === "string" ? signal : null,
      stdout,
      stderr,
    }
  })
  return { child, stdout: () => stdout, stderr: () => stderr, exited }
}

/** Runs `npm run storage -- <args>` on `storage` to its end (at most 60 s). */
export const runStorageCli = async (
  args: ReadonlyArray<string>,
  storage: string,
): Promise<CliResult> => {
  const cli = spawnStorageCli(args, storage)
  const timer = setTimeout(() => cli.child.kill("SIGKILL"), 60_000)
  const result = await cli.exited
  clearTimeout(timer)
  return result
}

/** That the command succeeded and printed its summary alone: one line on stdout, nothing on stderr. */
export const assertSummaryOnly = (result: CliResult): string => {
  assert.equal(result.code, 0, result.stderr)
  assert.equal(result.stderr, "")
  const lines = result.stdout.split("\n")
  assert.equal(lines.length, 2, `more than one line:\n${result.stdout}`)
  assert.equal(lines[1], "")
  return lines[0] ?? ""
}

/** That the command refused with one paragraph `petstore storage: …` on stderr, exit 1, no stack. */
export const assertRefused = (result: CliResult, reason: RegExp) => {
  assert.equal(result.code, 1, result.stdout)
  assert.equal(result.stdout, "")
  const lines = result.stderr.trimEnd().split("\n")
  assert.equal(lines.length, 1, `more than one line:\n${result.stderr}`)
  assert.match(lines[0] ?? "", /^petstore storage: /)
  assert.match(result.stderr, reason)
  assert.doesNotMatch(result.stderr, /\n\s+at /)
}

/** The counts a summary line states. */
export const summaryCounts = (line: string) => {
  const match =
    /: (\d+) pets, (\d+) API keys, (\d+) idempotency records, (\d+) bytes, ([\d.]+) s; new ids continue above (\d+)/.exec(
      line,
    )
  assert.ok(match !== null, `not a summary line: ${line}`)
  return {
    pets: Number(match[1]),
    apiKeys: Number(match[2]),
    idempotencyRecords: Number(match[3]),
    bytes: Number(match[4]),
    seconds: Number(match[5]),
    lastPetId: Number(match[6]),
  }
}

export type Server = RunningServer

/** Starts the server on `storage`, with `apiKey`, and resolves once it listens. */
export const startServer = (storage: string): Promise<Server> =>
  startServerProcess({
    storage,
    apiKeys: [apiKey],
    env: { PETSTORE_LOG_LEVEL: "warn", PETSTORE_RATE_LIMIT: "off" },
  })

export { PetBody, readPet, readPets } from "../harness.js"

/** A `POST /pets` with `pet` as its JSON body (and more headers, such as `Idempotency-Key`). */
export const postPet = (
  server: Server,
  pet: Omit<PetBody, "id">,
  headers: Record<string, string> = {},
) =>
  server.api("/pets", {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(pet),
  })

/** A store's rows, table by table, every value as text (null kept), each table sorted. */
export type StoreDump = Readonly<Record<string, ReadonlyArray<ReadonlyArray<string | null>>>>

const asText = (value: unknown): string | null =>
  value === null || value === undefined
    ? null
    : typeof value === "string"
      ? value
      : typeof value === "bigint" || typeof value === "number" || typeof value === "boolean"
        ? String(value)
        : value instanceof Date
          ? value.toISOString()
          : JSON.stringify(value)

const sortedRows = (rows: ReadonlyArray<ReadonlyArray<unknown>>) =>
  rows
    .map((row) => row.map(asText))
    .sort((left, right) => {
      const a = JSON.stringify(left)
      const b = JSON.stringify(right)
      return a < b ? -1 : a > b ? 1 : 0
    })

const openSql = (
  storage: string,
  wal: boolean,
): Effect.Effect<SqlClient.SqlClient, never, Scope.Scope> =>
  storage.startsWith("file:")
    ? SqliteClient.make({ filename: storage.slice("file:".length), disableWAL: !wal }).pipe(
        Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      )
    : Effect.orDie(
        PgClient.make({ url: Redacted.make(storage), maxConnections: 1 }).pipe(
          Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
        ),
      )

/**
 * Runs `use` on a connection of its own to `storage` (`file:…` or a PostgreSQL URL); an SQLite
 * file is switched to WAL mode, as a store is, unless `wal` is false (a backup file).
 */
export const withSql = <A>(
  storage: string,
  use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown, SqlClient.SqlClient>,
  options: { readonly wal?: boolean } = {},
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.flatMap(openSql(storage, options.wal ?? true), (sql) =>
        use(sql).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.provideService(SqlClient.SafeIntegers, true),
          Effect.orDie,
        ),
      ),
    ),
  )

/** The store's data tables, exactly: what a restore must reproduce. */
export const dumpData = (storage: string): Promise<StoreDump> =>
  withSql(storage, (sql) =>
    Effect.gen(function* () {
      const pets = yield* sql`SELECT id, name, category_id, status FROM pets`.values
      const keys =
        yield* sql`SELECT scope, idempotency_key, fingerprint, pet_id, created_at FROM idempotency_keys`
          .values
      const apiKeys = yield* sql`SELECT id, label, key_hash, created_at, last_used_at FROM api_keys`
        .values
      return {
        pets: sortedRows(pets),
        idempotency_keys: sortedRows(keys),
        api_keys: sortedRows(apiKeys),
      }
    }),
  )

/**
 * Everything a PostgreSQL database holds in its own schema, row for row: every table's rows and
 * every sequence's position (a sequence is no row, but a refused restore must not move it either).
 */
export const dumpPostgres = (url: string): Promise<StoreDump> =>
  withSql(url, (sql) =>
    Effect.gen(function* () {
      const tables =
        yield* sql`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`.values
      const dump: Record<string, ReadonlyArray<ReadonlyArray<string | null>>> = {}
      for (const [name] of tables) {
        const table = String(name)
        dump[table] = sortedRows(yield* sql.unsafe(`SELECT * FROM "${table}"`).values)
      }
      dump["(sequences)"] = sortedRows(
        yield* sql`SELECT sequencename, last_value FROM pg_sequences WHERE schemaname = 'public'`
          .values,
      )
      return dump
    }),
  )

/** A file and the journal files beside it, byte for byte: a digest of each that exists. */
export const fileState = (file: string): Readonly<Record<string, string>> => {
  const state: Record<string, string> = {}
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    const name = `${file}${suffix}`
    if (existsSync(name)) {
      state[path.basename(name)] = createHash("sha256").update(readFileSync(name)).digest("hex")
    }
  }
  return state
}

/** The names in `directory`: a refused or killed command leaves no file behind. */
export const filesIn = (directory: string): ReadonlyArray<string> => readdirSync(directory).sort()
