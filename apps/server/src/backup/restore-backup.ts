import path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { migrate, StoreFreeze, StoreRows } from "@petstore/storage/sql"
import { Effect, Option } from "effect"
import { describeStorageChoice } from "../storage/storage-selection.js"
import { checkBackup, type CheckedBackup } from "./check-backup.js"
import {
  createPrivateFile,
  ensureDirectory,
  publish,
  removeDatabaseFile,
  temporaryPathFor,
  whatIsAt,
} from "./durable-file.js"
import type { Progress } from "./progress.js"
import { failedBecause, StorageCommandFailure } from "./StorageCommandFailure.js"
import { openStore, type DurableStorage } from "./store-clients.js"
import { batchRows, type CopySummary } from "./take-backup.js"

export interface RestoreOptions {
  /** Replace what the store holds; without it, a store holding anything is refused. */
  readonly replace: boolean
}

const holdings = (counts: StoreRows.StoreCounts) =>
  `${counts.pets} pets, ${counts.api_keys} stored API keys and ${counts.idempotency_keys} idempotency records`

/**
 * Loads the backup into `target`, in the one transaction `inWriteTransaction` holds, which
 * holds the store's write lock from its start: the schema is migrated (the server's migrations),
 * the store checked to hold nothing (or, with `replace`, emptied), every row copied with its id,
 * and the id sequence set above the backup's last id, never below where the store's was. A
 * frozen store stays frozen: its freeze is lifted inside the transaction, for the copy, and
 * written back before the commit, so no other process ever sees it lifted.
 */
const load = (
  target: SqlClient.SqlClient,
  description: string,
  backup: CheckedBackup,
  options: RestoreOptions,
  progress: Progress,
) =>
  StoreRows.inWriteTransaction(
    target,
    Effect.gen(function* () {
      yield* Effect.provideService(migrate, SqlClient.SqlClient, target).pipe(
        Effect.catchTag("MigrationError", (error) =>
          Effect.fail(
            failedBecause(`the schema of ${description} cannot be brought up to date`)(error),
          ),
        ),
      )
      yield* StoreRows.lockForWriting(target)
      const counts = yield* StoreRows.countRows(target)
      const holdsData = counts.pets + counts.api_keys + counts.idempotency_keys > 0
      if (holdsData && !options.replace) {
        return yield* new StorageCommandFailure({
          message: `${description} holds ${holdings(counts)}: a restore refuses a store that holds data, so that nothing is lost by mistake. Nothing was changed. Restore into a new or empty store, or add --replace to replace what it holds with the backup.`,
        })
      }
      const frozenAt = yield* Effect.provideService(
        StoreFreeze.frozenSince,
        SqlClient.SqlClient,
        target,
      )
      if (Option.isSome(frozenAt)) yield* target`DELETE FROM petstore_freeze`
      if (holdsData) yield* StoreRows.deleteRows(target)
      const { metadata } = backup
      yield* progress.start(
        metadata.counts.pets + metadata.counts.idempotency_keys + metadata.counts.api_keys,
      )
      for (const table of StoreRows.storeTables) {
        yield* StoreRows.readBatches(
          backup.sql,
          table,
          batchRows,
          StoreRows.batchFormatFor(target),
          (batch) =>
            Effect.zipRight(
              StoreRows.insertBatch(target, table, batch),
              progress.advance(batch.rows),
            ),
          { outsideTransaction: true },
        )
      }
      yield* progress.finish
      const restored = yield* StoreRows.countRows(target)
      for (const table of StoreRows.storeTables) {
        if (restored[table.name] !== metadata.counts[table.name]) {
          return yield* Effect.dieMessage(
            `${restored[table.name]} rows of ${table.name} were restored, where the backup holds ${metadata.counts[table.name]}`,
          )
        }
      }
      yield* StoreRows.continueIdsAbove(target, metadata.lastPetId)
      if (Option.isSome(frozenAt)) {
        yield* target`INSERT INTO petstore_freeze (id, frozen_at) VALUES (1, ${frozenAt.value})`
      }
    }),
  ).pipe(
    Effect.catchTag("SqlError", (error) =>
      Effect.fail(
        failedBecause(
          `the restore into ${description} failed, and was rolled back: nothing was changed`,
        )(error),
      ),
    ),
  )

/**
 * A new SQLite file is written under a temporary name beside it, and given its name (never
 * replacing a file) once it is complete and on disk: an interrupted restore leaves no store
 * behind, not even an empty one. Like a backup it is private to its owner (mode 0600).
 */
const intoNewSqliteFile = (
  filename: string,
  description: string,
  backup: CheckedBackup,
  options: RestoreOptions,
  progress: Progress,
) => {
  const temporary = temporaryPathFor(filename)
  return Effect.acquireUseRelease(
    Effect.zipRight(ensureDirectory(path.dirname(filename)), createPrivateFile(temporary)),
    () =>
      Effect.zipRight(
        Effect.scoped(
          Effect.flatMap(openStore({ kind: "sqlite", filename: temporary }), (target) =>
            load(target, description, backup, options, progress),
          ),
        ).pipe(
          // Closing the last connection checkpoints the WAL into the file and removes it: the
          // file alone then holds the store, and may take its name.
          Effect.zipRight(whatIsAt(`${temporary}-wal`)),
          Effect.filterOrFail(
            (wal) => wal === "nothing",
            () =>
              new StorageCommandFailure({
                message: `the restored store could not be checkpointed into ${temporary}; it was not kept. Run the restore again.`,
              }),
          ),
        ),
        publish(
          temporary,
          filename,
          `${filename} was created by something else during the restore (a server starting on it?); the restored store was not kept, and that file was not changed. Run the restore again.`,
        ),
      ),
    (_, exit) => (exit._tag === "Success" ? Effect.void : removeDatabaseFile(temporary)),
  )
}

/**
 * Restores the backup `file` into `choice`: the file is checked first (see `checkBackup`), and
 * nothing is touched unless it passes; then it is loaded, all or nothing, into a new SQLite file,
 * or in one transaction into an existing SQLite file or a PostgreSQL database. Servers may be
 * running on the target: they keep reading what it held until the restore commits, their
 * creates wait for the restore (or answer 503 after their lock timeout), and after the commit
 * they serve what was restored.
 */
export const restoreBackup = (
  choice: DurableStorage,
  file: string,
  options: RestoreOptions,
  progress: Progress,
): Effect.Effect<CopySummary, StorageCommandFailure> =>
  Effect.scoped(
    Effect.gen(function* () {
      const started = Date.now()
      const backup = yield* checkBackup(file)
      const description = describeStorageChoice(choice)
      if (choice.kind === "sqlite") {
        if (choice.filename === backup.file) {
          return yield* new StorageCommandFailure({
            message: `PETSTORE_STORAGE names the backup itself (${backup.file}): restore it into the store, another file.`,
          })
        }
        const found = yield* whatIsAt(choice.filename)
        if (found === "other") {
          return yield* new StorageCommandFailure({
            message: `${choice.filename} is not a regular file, so it cannot hold a store. Check the path in PETSTORE_STORAGE.`,
          })
        }
        if (found === "nothing") {
          yield* intoNewSqliteFile(choice.filename, description, backup, options, progress)
        } else {
          yield* Effect.scoped(
            Effect.flatMap(openStore(choice), (target) =>
              load(target, description, backup, options, progress),
            ),
          )
        }
      } else {
        yield* Effect.scoped(
          Effect.flatMap(openStore(choice), (target) =>
            load(target, description, backup, options, progress),
          ),
        )
      }
      return {
        metadata: backup.metadata,
        bytes: backup.bytes,
        seconds: (Date.now() - started) / 1000,
      }
    }),
  )
