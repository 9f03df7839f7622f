import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { StoreRows } from "@petstore/storage/sql"
import { Effect, Either, Option, Schema } from "effect"

/**
 * A backup is an SQLite file with the schema of the SQLite store (the same migrations, so the
 * tables, `sqlite_sequence` and `petstore_migrations` are the store's) and one more table,
 * `petstore_backup`, of one row: what the file is. Its format version changes when what a
 * restore must know about the file changes; the schema version is the newest migration's.
 */
export const formatVersion = 1

/** What `petstore_backup` says of the backup. */
export interface BackupMetadata {
  readonly formatVersion: number
  readonly schemaVersion: number
  /** When the snapshot was taken, ISO 8601 in UTC. */
  readonly takenAt: string
  /** The store it was taken from, described without secrets (`SQLite file /srv/…`). */
  readonly source: string
  /** When its source had been frozen, if it was (see `npm run storage -- freeze`). */
  readonly sourceFrozenAt: Option.Option<string>
  /** New pets continue above this id after a restore. */
  readonly lastPetId: bigint
  readonly counts: StoreRows.StoreCounts
}

const createTable = (sql: SqlClient.SqlClient) => sql`
  CREATE TABLE petstore_backup (
    format_version INTEGER NOT NULL,
    schema_version INTEGER NOT NULL,
    taken_at TEXT NOT NULL,
    source TEXT NOT NULL,
    source_frozen_at TEXT,
    last_pet_id INTEGER NOT NULL,
    pets INTEGER NOT NULL,
    idempotency_keys INTEGER NOT NULL,
    api_keys INTEGER NOT NULL
  ) STRICT`

/** Adds the metadata table, with its one row, to a backup being written. */
export const writeMetadata = (
  sql: SqlClient.SqlClient,
  metadata: BackupMetadata,
): Effect.Effect<void, SqlError> =>
  Effect.zipRight(
    createTable(sql),
    sql`INSERT INTO petstore_backup ${sql.insert({
      format_version: metadata.formatVersion,
      schema_version: metadata.schemaVersion,
      taken_at: metadata.takenAt,
      source: metadata.source,
      source_frozen_at: Option.getOrNull(metadata.sourceFrozenAt),
      last_pet_id: metadata.lastPetId,
      pets: metadata.counts.pets,
      idempotency_keys: metadata.counts.idempotency_keys,
      api_keys: metadata.counts.api_keys,
    })}`,
  )

const Count = Schema.BigIntFromSelf.pipe(
  Schema.filter((count) => count >= 0n && count <= BigInt(Number.MAX_SAFE_INTEGER)),
)

const MetadataRow = Schema.Struct({
  format_version: Schema.BigIntFromSelf,
  schema_version: Schema.BigIntFromSelf,
  taken_at: Schema.String,
  source: Schema.String,
  source_frozen_at: Schema.NullOr(Schema.String),
  last_pet_id: Count,
  pets: Count,
  idempotency_keys: Count,
  api_keys: Count,
})

/**
 * The metadata row of a backup (read with safe integers), or what is wrong with it: the reason
 * completes "… is not a backup this petstore can restore: <reason>".
 */
export const decodeMetadata = (
  rows: ReadonlyArray<unknown>,
): Either.Either<BackupMetadata, string> => {
  if (rows.length !== 1)
    return Either.left(`its petstore_backup table holds ${rows.length} rows, not 1`)
  const decoded = Schema.decodeUnknownOption(MetadataRow)(rows[0])
  if (Option.isNone(decoded))
    return Either.left("its petstore_backup row does not have the fields a backup has")
  const row = decoded.value
  return Either.right({
    formatVersion: Number(row.format_version),
    schemaVersion: Number(row.schema_version),
    takenAt: row.taken_at,
    source: row.source,
    sourceFrozenAt: Option.fromNullable(row.source_frozen_at),
    lastPetId: row.last_pet_id,
    counts: {
      pets: Number(row.pets),
      idempotency_keys: Number(row.idempotency_keys),
      api_keys: Number(row.api_keys),
    },
  })
}
