import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { StorageUnavailable } from "@petstore/core"
import { Array, Cause, Clock, Effect, Layer, Option, Schema } from "effect"
import { ApiKeyNotFound, ApiKeyStore, type NewApiKey } from "@petstore/core"
import { defaultLockWait, waitingForLocks } from "./lock-wait.js"
import { migrate } from "./pet-migrations.js"
import { SafeIntegerFromColumn } from "./PetRow.js"
import { unavailableOrDefect } from "./transient-failure.js"

/** A row of `api_keys` as `list` selects it: no hash. */
const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  createdAt: SafeIntegerFromColumn,
  lastUsedAt: Schema.OptionFromNullOr(SafeIntegerFromColumn),
})

// A row the schema refuses means broken data no retry cures: a defect.
const decodeApiKeyRows = Schema.decodeUnknown(Schema.Array(ApiKeyRow))
const decodeRows = (rows: ReadonlyArray<unknown>) => Effect.orDie(decodeApiKeyRows(rows))

const decodeIdRows = Schema.decodeUnknown(Schema.Array(Schema.Struct({ id: Schema.String })))

/**
 * The `ApiKeyStore` on any `@effect/sql` client (SQLite and PostgreSQL are tested): the
 * `api_keys` table, migrated first. A lock another connection holds on an SQLite file is waited
 * for off the event loop (`defaultLockWait`); driver failures a retry may cure become
 * `StorageUnavailable`; any other is a defect.
 */
export const make: Effect.Effect<ApiKeyStore["Type"], StorageUnavailable, SqlClient.SqlClient> =
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const locked = waitingForLocks(defaultLockWait)
    yield* Effect.catchAllCause(locked(migrate), (cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.fail(new StorageUnavailable({ cause: Cause.squash(cause) })),
    )

    const columns = sql.literal(
      `id, label, created_at AS "createdAt", last_used_at AS "lastUsedAt"`,
    )

    const insert = (key: NewApiKey, now: number) =>
      sql`INSERT INTO api_keys ${sql.insert({
        id: key.id,
        label: key.label,
        key_hash: key.hash,
        created_at: now,
      })} RETURNING ${columns}`

    // One statement, so on SQLite (one writer) no other process can insert between its check
    // and its insert; PostgreSQL needs the table locked for that.
    const insertIfEmpty = (key: NewApiKey, now: number) =>
      sql`INSERT INTO api_keys (id, label, key_hash, created_at)
          SELECT ${key.id}, ${key.label}, ${key.hash}, CAST(${now} AS BIGINT)
          WHERE NOT EXISTS (SELECT 1 FROM api_keys)
          RETURNING ${columns}`
    const insertFirst = (key: NewApiKey, now: number) =>
      sql.onDialectOrElse({
        pg: () =>
          // @effect/sql makes a failed COMMIT a defect; here it is the store being unavailable.
          Effect.catchSomeDefect(
            sql.withTransaction(
              Effect.zipRight(sql`LOCK TABLE api_keys IN EXCLUSIVE MODE`, insertIfEmpty(key, now)),
            ),
            (defect) =>
              defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none(),
          ),
        orElse: () => insertIfEmpty(key, now),
      })

    const stored = <A, E>(statement: Effect.Effect<A, E>) =>
      Effect.catchAll(locked(statement), unavailableOrDefect)

    return ApiKeyStore.of({
      create: (key) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => stored(insert(key, now))),
          Effect.flatMap(decodeRows),
          Effect.flatMap((rows) =>
            Option.match(Array.head(rows), {
              onNone: () => Effect.dieMessage("the key inserted was not returned"),
              onSome: Effect.succeed,
            }),
          ),
        ),
      createFirst: (key) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => stored(insertFirst(key, now))),
          Effect.flatMap(decodeRows),
          Effect.map(Array.head),
        ),
      list: stored(sql`SELECT ${columns} FROM api_keys ORDER BY created_at, id`).pipe(
        Effect.flatMap(decodeRows),
      ),
      revoke: (id) =>
        stored(sql`DELETE FROM api_keys WHERE id = ${id} RETURNING id`).pipe(
          Effect.flatMap((rows) =>
            rows.length === 0 ? Effect.fail(new ApiKeyNotFound({ id })) : Effect.void,
          ),
        ),
      findIdByHash: (hash) =>
        stored(sql`SELECT id FROM api_keys WHERE key_hash = ${hash}`).pipe(
          Effect.flatMap((rows) => Effect.orDie(decodeIdRows(rows))),
          Effect.map((rows) => Option.map(Array.head(rows), (row) => row.id)),
        ),
      recordUses: (uses) =>
        Effect.forEach(
          uses,
          (use) =>
            stored(sql`UPDATE api_keys SET last_used_at = ${use.at}
                       WHERE id = ${use.id} AND (last_used_at IS NULL OR last_used_at < ${use.at})`),
          { discard: true },
        ),
    })
  })

/** The store on the `SqlClient` the layer is given. */
export const layer: Layer.Layer<ApiKeyStore, StorageUnavailable, SqlClient.SqlClient> =
  Layer.effect(ApiKeyStore, make)
