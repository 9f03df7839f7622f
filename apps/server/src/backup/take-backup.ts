import path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { migrate, schemaVersion, StoreFreeze, StoreRows } from "@petstore/storage/sql"
import { Clock, Effect, Option } from "effect"
import { describeStorageChoice } from "../storage/storage-selection.js"
import { formatVersion, writeMetadata, type BackupMetadata } from "./backup-format.js"
import {
  createPrivateFile,
  publish,
  removeDatabaseFile,
  sizeOf,
  temporaryPathFor,
  whatIsAt,
} from "./durable-file.js"
import type { Progress } from "./progress.js"
import { failedBecause, StorageCommandFailure } from "./StorageCommandFailure.js"
import { copyPages } from "./sqlite-page-copy.js"
import { openBackupFile, openExistingStore, type DurableStorage } from "./store-clients.js"

/** What a backup or a restore copied. */
export interface CopySummary {
  readonly metadata: BackupMetadata
  /** The backup file's size. */
  readonly bytes: number
  readonly seconds: number
}

/** Rows read and written at a time: a page of the primary key, one JSON text of about 0.5 MB. */
export const batchRows = 10_000

const isoTime = (millis: number) => new Date(millis).toISOString()

/**
 * The newest migration a store has applied, or `undefined` when it has no `petstore_migrations`
 * (not a store of this service). Read without changing anything.
 */
const appliedSchemaVersion = (sql: SqlClient.SqlClient) =>
  Effect.gen(function* () {
    const exists = yield* sql.onDialectOrElse({
      pg: () => sql`SELECT to_regclass('petstore_migrations') IS NOT NULL AS "exists"`,
      orElse: () =>
        sql`SELECT count(*) > 0 AS "exists" FROM sqlite_master
            WHERE type = 'table' AND name = 'petstore_migrations'`,
    })
    const found = exists[0]?.["exists"]
    if (found !== true && found !== 1 && found !== 1n) return undefined
    const rows = yield* sql`SELECT max(migration_id) AS version FROM petstore_migrations`
    return Number(rows[0]?.["version"] ?? 0)
  })

/** Refuses a store that is not this service's, or that a newer petstore has migrated. */
const checkSourceSchema = (description: string, version: number | undefined) =>
  Effect.gen(function* () {
    if (version === undefined || version < 3) {
      return yield* new StorageCommandFailure({
        message: `${description} holds no petstore store (its schema is missing or incomplete): there is nothing to back up. Check that PETSTORE_STORAGE names the server's store, and that a server has started on it once.`,
      })
    }
    if (version > schemaVersion) {
      return yield* new StorageCommandFailure({
        message: `${description} has schema version ${version}, newer than this petstore's (${schemaVersion}): back it up with the petstore that migrated it.`,
      })
    }
  })

/** When the store was frozen, if it was; a store older than the freeze never was. */
const frozenAtOf = (sql: SqlClient.SqlClient, version: number) =>
  version >= 4
    ? Effect.provideService(StoreFreeze.frozenSince, SqlClient.SqlClient, sql)
    : Effect.succeed(Option.none<number>())

/** Brings a backup's copy of the store to this petstore's schema, as a server would. */
const migrated = (backup: SqlClient.SqlClient) =>
  Effect.provideService(migrate, SqlClient.SqlClient, backup).pipe(
    Effect.catchTag("MigrationError", (error) =>
      Effect.fail(failedBecause("the backup's schema cannot be brought up to date")(error)),
    ),
  )

/**
 * A SQLite store: its pages copied into the temporary file under one read transaction
 * (`copyPages`), while the server keeps committing. Then the copy is made a file of its own (no
 * WAL), brought to this schema and described.
 */
const fromSqlite = (
  store: SqlClient.SqlClient,
  filename: string,
  description: string,
  temporary: string,
  progress: Progress,
) =>
  Effect.gen(function* () {
    const takenAt = yield* Clock.currentTimeMillis
    const sizes = yield* store`SELECT page_size * page_count AS bytes
                               FROM pragma_page_size, pragma_page_count`
    const estimate = Number(sizes[0]?.["bytes"] ?? 0)
    yield* progress.whileFileGrows(temporary, estimate, copyPages(filename, temporary))

    const backup = yield* openBackupFile(temporary, { readonly: false })
    yield* backup`PRAGMA journal_mode = DELETE`
    const version = yield* appliedSchemaVersion(backup)
    yield* checkSourceSchema(description, version)
    const frozenAt = yield* frozenAtOf(backup, version ?? 0)
    yield* migrated(backup)
    yield* backup`DELETE FROM petstore_freeze`
    const counts = yield* StoreRows.countRows(backup)
    const lastPetId = yield* StoreRows.lastPetId(backup)
    yield* StoreRows.continueIdsAbove(backup, lastPetId)
    return { backup, takenAt, frozenAt, counts, lastPetId }
  })

/**
 * A PostgreSQL store: one `REPEATABLE READ, READ ONLY` transaction, each table read through a
 * cursor in batches and written into the backup as it comes (the backup's writes run outside
 * that transaction, on the file's own connection). Writers are never blocked.
 */
const fromPostgres = (
  store: SqlClient.SqlClient,
  description: string,
  temporary: string,
  progress: Progress,
) =>
  Effect.gen(function* () {
    const backup = yield* openBackupFile(temporary, { readonly: false })
    // The file is a temporary one, removed unless it is finished and flushed: no journal.
    yield* backup`PRAGMA journal_mode = OFF`
    yield* backup`PRAGMA synchronous = OFF`
    yield* migrated(backup)
    const snapshot = yield* StoreRows.inSnapshot(
      store,
      Effect.gen(function* () {
        const takenAt = yield* Clock.currentTimeMillis
        const version = yield* appliedSchemaVersion(store)
        yield* checkSourceSchema(description, version)
        const frozenAt = yield* frozenAtOf(store, version ?? 0)
        const counts = yield* StoreRows.countRows(store)
        yield* progress.start(counts.pets + counts.idempotency_keys + counts.api_keys)
        for (const table of StoreRows.storeTables) {
          yield* StoreRows.readBatches(store, table, batchRows, "json rows", (batch) =>
            Effect.zipRight(
              StoreRows.withoutTransaction(StoreRows.insertBatch(backup, table, batch)),
              progress.advance(batch.rows),
            ),
          )
        }
        const lastPetId = yield* StoreRows.lastPetId(store)
        return { takenAt, frozenAt, lastPetId }
      }),
    )
    yield* progress.finish
    const counts = yield* StoreRows.countRows(backup)
    yield* StoreRows.continueIdsAbove(backup, snapshot.lastPetId)
    yield* backup`PRAGMA journal_mode = DELETE`
    return { backup, ...snapshot, counts }
  })

/**
 * Takes a backup of `choice` into the new file `file`: checks that the file does not exist
 * and that its folder does, writes a temporary file beside it (mode 0600: it holds key
 * hashes), and gives it its name only once it is complete and on disk. Never writes to the store.
 * On any failure, or an interruption, the temporary file is removed and nothing else is left.
 */
export const takeBackup = (
  choice: DurableStorage,
  file: string,
  progress: Progress,
): Effect.Effect<CopySummary, StorageCommandFailure> =>
  Effect.gen(function* () {
    const started = Date.now()
    const final = path.resolve(file)
    const description = describeStorageChoice(choice)
    if ((yield* whatIsAt(final)) !== "nothing") {
      return yield* new StorageCommandFailure({
        message: `${final} already exists: a backup never replaces a file. Name a new file, or move the old one away first.`,
      })
    }
    if ((yield* whatIsAt(path.dirname(final))) === "nothing") {
      return yield* new StorageCommandFailure({
        message: `the folder ${path.dirname(final)} does not exist: create it, or name a file in an existing folder.`,
      })
    }
    const temporary = temporaryPathFor(final)
    const metadata = yield* Effect.acquireUseRelease(
      createPrivateFile(temporary),
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const taken = yield* (
              choice.kind === "sqlite"
                ? Effect.flatMap(openExistingStore(choice), (store) =>
                    fromSqlite(store, choice.filename, description, temporary, progress),
                  )
                : Effect.flatMap(openExistingStore(choice), (store) =>
                    fromPostgres(store, description, temporary, progress),
                  )
            ).pipe(
              Effect.catchTag("SqlError", (error): Effect.Effect<never, StorageCommandFailure> =>
                Effect.fail(failedBecause(`the backup of ${description} failed`)(error)),
              ),
            )
            const metadata: BackupMetadata = {
              formatVersion,
              schemaVersion,
              takenAt: isoTime(taken.takenAt),
              source: description,
              sourceFrozenAt: Option.map(taken.frozenAt, isoTime),
              lastPetId: taken.lastPetId,
              counts: taken.counts,
            }
            yield* writeMetadata(taken.backup, metadata).pipe(
              Effect.catchTag("SqlError", (error): Effect.Effect<never, StorageCommandFailure> =>
                Effect.fail(failedBecause(`${temporary} cannot be written`)(error)),
              ),
            )
            return metadata
          }),
        ).pipe(
          Effect.zipLeft(
            publish(
              temporary,
              final,
              `${final} was created by something else while the backup was being written; the backup was not kept. Name a new file.`,
            ),
          ),
        ),
      (_, exit) => (exit._tag === "Success" ? Effect.void : removeDatabaseFile(temporary)),
    )
    const bytes = yield* sizeOf(final)
    return { metadata, bytes, seconds: (Date.now() - started) / 1000 }
  })
