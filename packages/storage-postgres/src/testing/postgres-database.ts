import { randomBytes } from "node:crypto"
import { after, describe, it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Cause, Duration, Effect, Exit, Redacted } from "effect"

/** A database created for one test run and dropped at its end. */
export interface TemporaryPostgresDatabase {
  readonly name: string
  /** Its connection URL. */
  readonly url: string
  /** Refuses new connections to it and ends the open ones, as an outage would. */
  readonly refuseConnections: () => Promise<void>
  /** Ends what `refuseConnections` began. */
  readonly allowConnections: () => Promise<void>
  /** Another fresh database, dropped with this one. */
  readonly createAnother: () => Promise<TemporaryPostgresDatabase>
}

const defaultAdminUrl = "postgres://postgres@127.0.0.1:5432/postgres"

/** The server to create test databases on: `PETSTORE_TEST_POSTGRES_URL`, a superuser's URL. */
const adminUrl = () => process.env["PETSTORE_TEST_POSTGRES_URL"] || defaultAdminUrl

const withoutPassword = (url: string) => {
  const parsed = new URL(url)
  parsed.password = ""
  return parsed.toString()
}

const runAdmin = async (statement: string): Promise<void> => {
  const exit = await Effect.runPromiseExit(
    Effect.scoped(
      Effect.flatMap(
        PgClient.make({
          url: Redacted.make(adminUrl()),
          connectTimeout: Duration.seconds(3),
          maxConnections: 1,
        }).pipe(Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make)),
        (sql) => sql.unsafe(statement),
      ),
    ),
  )
  if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
}

const errorMessages = (error: unknown): string => {
  if (error instanceof AggregateError) return error.errors.map(errorMessages).join("; ")
  if (error instanceof Error) {
    const inner = error.cause === undefined ? "" : errorMessages(error.cause)
    return [error.message, inner].filter((part) => part !== "").join(": ")
  }
  return String(error)
}

const createDatabase = async (created: Array<string>): Promise<TemporaryPostgresDatabase> => {
  const name = `petstore_test_${process.pid}_${randomBytes(4).toString("hex")}`
  await runAdmin(`CREATE DATABASE "${name}"`)
  created.push(name)
  const url = new URL(adminUrl())
  url.pathname = `/${name}`
  return {
    name,
    url: url.toString(),
    refuseConnections: async () => {
      await runAdmin(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
      await runAdmin(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`,
      )
    },
    allowConnections: async () => {
      await runAdmin(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
    },
    createAnother: () => createDatabase(created),
  }
}

/**
 * Declares a `node:test` suite that runs against a fresh PostgreSQL database of its own, created
 * now and dropped when the suite ends. Await it at the top level of a test file:
 *
 * ```ts
 * await withTemporaryPostgresDatabase("PostgreSQL", (database) => {
 *   repositoryContract("PostgreSQL", PostgresPetRepository.layer({ url: database.url }))
 * })
 * ```
 *
 * The server is `PETSTORE_TEST_POSTGRES_URL` (a superuser), by default
 * `postgres://postgres@127.0.0.1:5432/postgres`. When it cannot be reached the suite is reported
 * skipped with the reason; under `CI=true` it fails instead.
 */
export const withTemporaryPostgresDatabase = async (
  suiteName: string,
  defineTests: (database: TemporaryPostgresDatabase) => void,
): Promise<void> => {
  const created: Array<string> = []
  let database: TemporaryPostgresDatabase
  try {
    database = await createDatabase(created)
  } catch (error) {
    const reason = `PostgreSQL at ${withoutPassword(adminUrl())} is unavailable (${errorMessages(error)}); set PETSTORE_TEST_POSTGRES_URL to a reachable server`
    if (process.env["CI"] === "true") {
      describe(suiteName, () => {
        it("needs PostgreSQL, which CI=true requires", () => {
          throw new Error(reason)
        })
      })
    } else {
      describe(suiteName, () => {
        it("runs against PostgreSQL", { skip: reason }, () => {})
      })
    }
    return
  }
  describe(suiteName, () => {
    after(async () => {
      for (const name of created) await runAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    })
    defineTests(database)
  })
}
