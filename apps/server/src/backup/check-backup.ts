import { open } from "node:fs/promises"
import path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { schemaVersion, StoreRows } from "@petstore/storage/sql"
import { Effect, Either, type Scope } from "effect"
import { decodeMetadata, formatVersion, type BackupMetadata } from "./backup-format.js"
import { sizeOf, whatIsAt } from "./durable-file.js"
import { failedBecause, reasonsOf, StorageCommandFailure } from "./StorageCommandFailure.js"
import { openBackupFile } from "./store-clients.js"

/** A backup that passed every check, open for reading. */
export interface CheckedBackup {
  readonly file: string
  readonly bytes: number
  readonly metadata: BackupMetadata
  readonly sql: SqliteClient.SqliteClient
}

const sqliteMagic = Buffer.from("SQLite format 3\0", "latin1")

const readHeader = (file: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await open(file, "r")
      try {
        const header = Buffer.alloc(100)
        const { bytesRead } = await handle.read(header, 0, 100, 0)
        return header.subarray(0, bytesRead)
      } finally {
        await handle.close()
      }
    },
    catch: failedBecause(`${file} cannot be read`),
  })

/**
 * What is wrong with an SQLite file's first 100 bytes and its size, judged from the header
 * alone (https://www.sqlite.org/fileformat2.html#the_database_header); `undefined` when nothing.
 */
const headerProblem = (header: Buffer, size: number): string | undefined => {
  if (size === 0) return "it is empty"
  if (header.length < 100 || !header.subarray(0, 16).equals(sqliteMagic)) {
    return "it is not an SQLite database (it does not begin with SQLite's header)"
  }
  const declared = header.readUInt16BE(16)
  const pageSize = declared === 1 ? 65536 : declared
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) {
    return `its header is damaged (a page size of ${declared})`
  }
  // A backup is written in rollback-journal mode; a file in WAL mode is a live store (or a copy
  // of one, consistent only with its -wal beside it), and reading it would add files beside it.
  if (header.readUInt8(18) === 2 || header.readUInt8(19) === 2) {
    return "it is in WAL mode, as a live store is and a backup never is (to copy a store, back it up with `npm run storage -- backup` and restore that)"
  }
  // The page count in the header is valid when the two change counters agree.
  const pages = header.readUInt32BE(28)
  const countValid = pages > 0 && header.readUInt32BE(24) === header.readUInt32BE(92)
  if (size % pageSize !== 0 || (countValid && size < pages * pageSize)) {
    const expected = countValid ? `the ${pages * pageSize} bytes its header counts` : "whole pages"
    return `it is truncated: ${size} bytes, not ${expected}`
  }
  return undefined
}

const refuse = (file: string, problem: string) =>
  new StorageCommandFailure({
    message: `${file} is not a backup this petstore can restore: ${problem}. Nothing was changed. Check the file's name, or take the backup again with \`npm run storage -- backup\`.`,
  })

/**
 * Checks a backup before anything is touched, in this order: that the file exists and is a
 * regular file; that it is an SQLite database, whole (its header and size); that it passes
 * SQLite's `integrity_check`; that it holds `petstore_backup` with a format and a schema version
 * this petstore knows; and that its tables hold the rows its metadata counts. The file is opened
 * read-only: checking never changes it. Each refusal names the file and what is wrong.
 */
export const checkBackup = (
  file: string,
): Effect.Effect<CheckedBackup, StorageCommandFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = path.resolve(file)
    const found = yield* whatIsAt(resolved)
    if (found === "nothing") return yield* refuse(resolved, "it does not exist")
    if (found === "other") return yield* refuse(resolved, "it is not a regular file")
    const bytes = yield* sizeOf(resolved)
    const problem = headerProblem(yield* readHeader(resolved), bytes)
    if (problem !== undefined) return yield* refuse(resolved, problem)

    const sql = yield* Effect.mapError(openBackupFile(resolved, { readonly: true }), (failure) =>
      refuse(resolved, failure.message),
    )
    const query = <A>(statement: Effect.Effect<A, unknown>) =>
      Effect.mapError(statement, (error) =>
        refuse(resolved, `SQLite cannot read it (${reasonsOf(error)})`),
      )

    const integrity = yield* query(sql`PRAGMA integrity_check(5)`.values)
    const verdicts = integrity.map((row) => String(row[0]))
    if (verdicts.length !== 1 || verdicts[0] !== "ok") {
      return yield* refuse(resolved, `it fails SQLite's integrity check (${verdicts.join("; ")})`)
    }

    const tables = yield* query(
      sql`SELECT count(*) AS found FROM sqlite_master WHERE type = 'table' AND name = 'petstore_backup'`
        .values,
    )
    if (Number(tables[0]?.[0]) !== 1) {
      return yield* refuse(
        resolved,
        "it is an SQLite database but not a petstore backup (it has no petstore_backup table)",
      )
    }
    const rows = yield* query(
      sql`SELECT * FROM petstore_backup`.pipe(Effect.provideService(SqlClient.SafeIntegers, true)),
    )
    const metadata = yield* Either.match(decodeMetadata(rows), {
      onLeft: (reason) => Effect.fail(refuse(resolved, reason)),
      onRight: Effect.succeed,
    })
    if (metadata.formatVersion !== formatVersion) {
      return yield* refuse(
        resolved,
        metadata.formatVersion > formatVersion
          ? `it is in backup format ${metadata.formatVersion}, newer than this petstore reads (${formatVersion}); restore it with the petstore that took it, or a newer one`
          : `it is in backup format ${metadata.formatVersion}, which this petstore no longer reads (it reads ${formatVersion})`,
      )
    }
    if (metadata.schemaVersion !== schemaVersion) {
      return yield* refuse(
        resolved,
        metadata.schemaVersion > schemaVersion
          ? `it holds schema version ${metadata.schemaVersion}, newer than this petstore's (${schemaVersion}); restore it with the petstore that took it, or a newer one`
          : `it holds schema version ${metadata.schemaVersion}, older than any this petstore restores (${schemaVersion})`,
      )
    }
    const counts = yield* query(StoreRows.countRows(sql))
    for (const table of StoreRows.storeTables) {
      if (counts[table.name] !== metadata.counts[table.name]) {
        return yield* refuse(
          resolved,
          `its ${table.name} table holds ${counts[table.name]} rows where its metadata counts ${metadata.counts[table.name]}: it was changed after it was taken`,
        )
      }
    }
    return { file: resolved, bytes, metadata, sql }
  })
