import * as Reactivity from "@effect/experimental/Reactivity"
import type * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { PostgresPetRepository } from "@petstore/storage-postgres"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { Cause, Duration, Effect, type Scope } from "effect"
import { explainStorageFailure } from "../storage/explain-storage-failure.js"
import type { StorageChoice } from "../storage/storage-selection.js"
import { whatIsAt } from "./durable-file.js"
import { failedBecause, StorageCommandFailure } from "./StorageCommandFailure.js"

/** A durable store: what the `storage` commands act on. */
export type DurableStorage = Exclude<StorageChoice, { readonly kind: "memory" }>

/**
 * The store's connection, opened as the server opens it (SQLite: WAL, `synchronous=FULL`, the
 * same busy timeout). On PostgreSQL one connection, with longer timeouts than a server's: a
 * restore's transaction takes the tables' locks and may wait its turn behind a create batch.
 */
export const openStore = (
  choice: DurableStorage,
): Effect.Effect<SqlClient.SqlClient, StorageCommandFailure, Scope.Scope> => {
  const opened =
    choice.kind === "sqlite"
      ? SqlitePetRepository.makeClient({ filename: choice.filename })
      : PostgresPetRepository.makeClient({
          url: choice.url,
          maxConnections: 1,
          statementTimeout: Duration.minutes(1),
          lockTimeout: Duration.seconds(10),
          idleInTransactionTimeout: Duration.minutes(1),
        })
  return Effect.catchAllCause(opened, (cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.interrupt
      : Effect.fail(
          new StorageCommandFailure({
            message: explainStorageFailure(choice, cause),
          }),
        ),
  )
}

/** An existing SQLite store: a backup or a freeze never creates one where there is none. */
export const openExistingStore = (
  choice: DurableStorage,
): Effect.Effect<SqlClient.SqlClient, StorageCommandFailure, Scope.Scope> =>
  Effect.gen(function* () {
    if (choice.kind === "sqlite" && (yield* whatIsAt(choice.filename)) === "nothing") {
      return yield* new StorageCommandFailure({
        message: `there is no store at ${choice.filename}: PETSTORE_STORAGE names a file that does not exist. Check that it names the file the server uses.`,
      })
    }
    return yield* openStore(choice)
  })

/**
 * A backup file, opened by itself: no WAL (a backup is one self-contained file), and when
 * `readonly`, never written, journal files included.
 */
export const openBackupFile = (
  filename: string,
  options: { readonly readonly: boolean },
): Effect.Effect<SqliteClient.SqliteClient, StorageCommandFailure, Scope.Scope> =>
  SqliteClient.make({ filename, readonly: options.readonly, disableWAL: true }).pipe(
    Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
    // better-sqlite3 throws while opening a file it cannot use.
    Effect.catchAllDefect((cause) =>
      Effect.fail(failedBecause(`${filename} cannot be opened as an SQLite database`)(cause)),
    ),
  )
