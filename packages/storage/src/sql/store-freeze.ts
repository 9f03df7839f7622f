import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Array, Clock, Effect, Option, Schema } from "effect"
import { SafeIntegerFromColumn } from "./PetRow.js"
import { inTransaction } from "./store-transaction.js"

const decodeFrozenAt = Schema.decodeUnknown(
  Schema.Array(Schema.Struct({ frozenAt: SafeIntegerFromColumn })),
)

const firstFrozenAt = (rows: ReadonlyArray<unknown>) =>
  Effect.map(Effect.orDie(decodeFrozenAt(rows)), (decoded) =>
    Option.map(Array.head(decoded), (row) => row.frozenAt),
  )

/** When the store was frozen (epoch milliseconds), if it is. The schema must be migrated. */
export const frozenSince: Effect.Effect<
  Option.Option<number>,
  SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(
    sql`SELECT frozen_at AS "frozenAt" FROM petstore_freeze`.pipe(
      Effect.provideService(SqlClient.SafeIntegers, true),
    ),
    firstFrozenAt,
  ),
)

export interface Frozen {
  /** Epoch milliseconds. */
  readonly frozenAt: number
  /** Whether the store was frozen before this call. */
  readonly already: boolean
}

/**
 * Freezes the store: from the moment this commits, every process on it is refused each new pet
 * and each key created or revoked, by the triggers the migration made, and reads go on. On
 * PostgreSQL the writers' tables are locked first, as a create batch locks `pets`, so every
 * batch that began before has committed when this does, and any later one sees the freeze; on
 * SQLite the one writer's lock does the same. Freezing a frozen store keeps its first time.
 */
export const freeze: Effect.Effect<Frozen, SqlError, SqlClient.SqlClient> = Effect.gen(
  function* () {
    const sql = yield* SqlClient.SqlClient
    const now = yield* Clock.currentTimeMillis
    return yield* inTransaction(
      sql,
      Effect.gen(function* () {
        yield* sql.onDialectOrElse({
          pg: () => sql`LOCK TABLE pets, api_keys, petstore_freeze IN EXCLUSIVE MODE`,
          orElse: () => Effect.void,
        })
        const inserted = yield* sql`
          INSERT INTO petstore_freeze (id, frozen_at) VALUES (1, ${now})
          ON CONFLICT (id) DO NOTHING
          RETURNING frozen_at AS "frozenAt"`
        const frozenAt = yield* Effect.flatMap(
          inserted.length > 0
            ? Effect.succeed(inserted)
            : sql`SELECT frozen_at AS "frozenAt" FROM petstore_freeze`,
          firstFrozenAt,
        )
        return yield* Option.match(frozenAt, {
          onNone: () => Effect.dieMessage("the freeze row is missing after it was written"),
          onSome: (at) => Effect.succeed({ frozenAt: at, already: inserted.length === 0 }),
        })
      }).pipe(Effect.provideService(SqlClient.SafeIntegers, true)),
    )
  },
)

/** Ends a freeze: writes are taken again at once, everywhere. Answers since when it was frozen, if it was. */
export const thaw: Effect.Effect<
  Option.Option<number>,
  SqlError,
  SqlClient.SqlClient
> = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(
    sql`DELETE FROM petstore_freeze RETURNING frozen_at AS "frozenAt"`.pipe(
      Effect.provideService(SqlClient.SafeIntegers, true),
    ),
    firstFrozenAt,
  ),
)
