import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type { PetRepository, StorageUnavailable } from "@petstore/core"
import type { GroupCommitOptions } from "@petstore/storage/sql"
import { PostgresPetRepository } from "@petstore/storage-postgres"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { Effect, Redacted, type Layer, type Scope } from "effect"

/** A store made for one benchmark run, removed by `dispose`. */
export interface BenchStore {
  readonly engine: "SQLite" | "PostgreSQL"
  /** The store as `PETSTORE_STORAGE` names it, for a server or the storage CLI. */
  readonly storage: string
  readonly layer: (
    groupCommit?: Partial<GroupCommitOptions>,
  ) => Layer.Layer<PetRepository, StorageUnavailable>
  /** Runs SQL on the store beside the repository (for seeding and query plans). */
  readonly run: <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => Promise<A>
  readonly dispose: () => Promise<void>
}

const withClient =
  (client: Effect.Effect<SqlClient.SqlClient, unknown, Scope.Scope | Reactivity.Reactivity>) =>
  <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          Effect.provideServiceEffect(client, Reactivity.Reactivity, Reactivity.make),
          use,
        ),
      ).pipe(Effect.orDie),
    )

export const sqliteStore = (): BenchStore & { readonly filename: string } => {
  const directory = mkdtempSync(path.join(tmpdir(), "petstore-bench-"))
  const filename = path.join(directory, "bench.db")
  return {
    engine: "SQLite",
    storage: `file:${filename}`,
    filename,
    layer: (groupCommit = {}) => SqlitePetRepository.layer({ filename, groupCommit }),
    run: withClient(SqliteClient.make({ filename })),
    dispose: async () => rmSync(directory, { recursive: true, force: true }),
  }
}

export const adminUrl =
  process.env["PETSTORE_BENCH_POSTGRES_URL"] || "postgres://postgres@127.0.0.1:5432/postgres"
const runAdmin = (statement: string) =>
  withClient(PgClient.make({ url: Redacted.make(adminUrl) }))((sql) => sql.unsafe(statement))

let databases = 0

/**
 * A new database of its own name (this process's id and a counter), empty or, with `template`,
 * a copy of that database (which no connection may be using).
 */
export const postgresStore = async (
  options: { readonly template?: string } = {},
): Promise<BenchStore & { readonly database: string }> => {
  const name = `petstore_bench_${process.pid}_${++databases}`
  await runAdmin(
    `CREATE DATABASE "${name}"${options.template === undefined ? "" : ` TEMPLATE "${options.template}"`}`,
  )
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    engine: "PostgreSQL",
    storage: url.toString(),
    database: name,
    layer: (groupCommit = {}) => PostgresPetRepository.layer({ url: url.toString(), groupCommit }),
    run: withClient(PgClient.make({ url: Redacted.make(url.toString()) })),
    dispose: async () => {
      await runAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    },
  }
}

/**
 * Drops every database `postgresStore` made in this process and nothing has dropped, through
 * `psql`, synchronously: for an exit handler, when a run stops before its `dispose` calls.
 */
export const dropDatabasesSync = (): void => {
  if (databases === 0) return
  const psql = (command: string) =>
    execFileSync("psql", ["-X", "-A", "-t", "-q", "-d", adminUrl, "-c", command], {
      encoding: "utf8",
      timeout: 30_000,
    })
  const names = psql(
    `SELECT datname FROM pg_database WHERE starts_with(datname, 'petstore_bench_${process.pid}_')`,
  )
  for (const name of names.split("\n").filter((line) => line !== ""))
    psql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
}

/** Creates the schema, by opening the repository once. */
export const migrate = (store: BenchStore) =>
  Effect.runPromise(Effect.provide(Effect.void, store.layer()).pipe(Effect.orDie))
