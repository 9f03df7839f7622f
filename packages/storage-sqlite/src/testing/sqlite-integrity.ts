import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { Effect } from "effect"

/**
 * Runs SQLite's `PRAGMA integrity_check` on a database file (recovering its WAL first, as every
 * connection does) and returns what it reports: `["ok"]` for a sound file.
 */
export const sqliteIntegrityCheck = (filename: string): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqliteClient.make({ filename }).pipe(
          Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
        )
        const rows = yield* sql`PRAGMA integrity_check`
        return rows.map((row) => String(row["integrity_check"]))
      }),
    ),
  )
