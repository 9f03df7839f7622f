import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Exit, Fiber, FiberRef } from "effect"
import { inTransaction } from "./store-transaction.js"

/**
 * The store's rows, table by table, as backups and restores copy them: every column, in the
 * order of the primary key, in batches, on either engine. A value is copied as the driver gives
 * it (int64 as a bigint from SQLite, as decimal text from PostgreSQL), never through a number.
 */

export type StoreTableName = "pets" | "idempotency_keys" | "api_keys"

interface Column {
  readonly name: string
  readonly type: "bigint" | "text"
}

export interface StoreTable {
  readonly name: StoreTableName
  readonly columns: ReadonlyArray<Column>
  /** The primary key's columns: the order rows are read in. */
  readonly key: ReadonlyArray<string>
}

const bigint = (name: string): Column => ({ name, type: "bigint" })
const text = (name: string): Column => ({ name, type: "text" })

/**
 * The tables that hold the store's data, in an order that inserts a row after the rows it
 * refers to. `petstore_migrations` and `petstore_freeze` describe the store rather than hold
 * its data: neither is copied.
 */
export const storeTables: ReadonlyArray<StoreTable> = [
  {
    name: "pets",
    columns: [bigint("id"), text("name"), bigint("category_id"), text("status")],
    key: ["id"],
  },
  {
    name: "idempotency_keys",
    columns: [
      text("scope"),
      text("idempotency_key"),
      text("fingerprint"),
      bigint("pet_id"),
      bigint("created_at"),
    ],
    key: ["scope", "idempotency_key"],
  },
  {
    name: "api_keys",
    columns: [
      text("id"),
      text("label"),
      text("key_hash"),
      bigint("created_at"),
      bigint("last_used_at"),
    ],
    key: ["id"],
  },
]

/** One row: the table's columns' values, in its `columns` order. */
export type Row = ReadonlyArray<unknown>

export type StoreCounts = Readonly<Record<StoreTableName, number>>

const columnList = (table: StoreTable) => table.columns.map((column) => column.name).join(", ")

/**
 * `effect` with no transaction of any client around it. @effect/sql keeps the connection of the
 * transaction a fiber is in under one context tag for every client, so a statement of another
 * client inside it would run on that transaction's connection: a copy between two stores runs
 * the side that is not in a transaction through this.
 */
export const withoutTransaction = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  Effect.locallyWith(effect, FiberRef.currentContext, Context.omit(SqlClient.TransactionConnection))

const safeIntegers = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, SqlClient.SafeIntegers, true)

const countOf = (value: unknown): number =>
  typeof value === "bigint" || typeof value === "string" || typeof value === "number"
    ? Number(value)
    : Number.NaN

/** How many rows each table holds. */
export const countRows = (sql: SqlClient.SqlClient): Effect.Effect<StoreCounts, SqlError> =>
  Effect.map(
    sql`SELECT (SELECT count(*) FROM pets) AS pets,
               (SELECT count(*) FROM idempotency_keys) AS idempotency_keys,
               (SELECT count(*) FROM api_keys) AS api_keys`.pipe(safeIntegers),
    (rows) => ({
      pets: countOf(rows[0]?.["pets"]),
      idempotency_keys: countOf(rows[0]?.["idempotency_keys"]),
      api_keys: countOf(rows[0]?.["api_keys"]),
    }),
  )

/**
 * A consistent snapshot of the whole store for `effect`'s reads, while writers go on: on
 * PostgreSQL one `REPEATABLE READ, READ ONLY` transaction; on SQLite one read transaction (in
 * WAL mode it blocks no writer).
 */
export const inSnapshot = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError, R> =>
  inTransaction(
    sql,
    Effect.zipRight(
      sql.onDialectOrElse({
        pg: () => sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`,
        orElse: () => Effect.void,
      }),
      effect,
    ),
  )

/**
 * The batch `onBatch` was given last, still being handled: the next batch is read meanwhile (a
 * restore reads the backup file while the store inserts the batch before), then it is waited for
 * before the next `onBatch` starts.
 */
type InFlight<E> = Fiber.Fiber<void, E> | undefined

const settled = <E>(inFlight: InFlight<E>): Effect.Effect<void, E> =>
  inFlight === undefined ? Effect.void : Fiber.join(inFlight)

/**
 * Reads every row of `table` in key order, `batchSize` at a time, handing each batch to
 * `onBatch`, one at a time and in order, while the next batch is read: never more than two
 * batches in memory. On PostgreSQL through a cursor, which must run inside a transaction
 * (`inSnapshot`); on SQLite by pages of the primary key.
 */
export const readRows = <E, R>(
  sql: SqlClient.SqlClient,
  table: StoreTable,
  batchSize: number,
  onBatch: (rows: ReadonlyArray<Row>) => Effect.Effect<void, E, R>,
  options: {
    /**
     * Runs the reads outside the transaction the caller is in (another client's), while
     * `onBatch` runs inside it: a restore reads a backup file while writing the store.
     */
    readonly outsideTransaction?: boolean
  } = {},
): Effect.Effect<void, E | SqlError, R> => {
  const read = <A>(statement: Effect.Effect<A, SqlError>) =>
    options.outsideTransaction === true ? withoutTransaction(statement) : statement
  const columns = columnList(table)
  const order = table.key.join(", ")
  /** Hands `rows` over once the batch before has been handled; then `next`, reading meanwhile. */
  const handOver = (
    rows: ReadonlyArray<Row>,
    inFlight: InFlight<E>,
    next: (handling: Fiber.Fiber<void, E>) => Effect.Effect<void, E | SqlError, R>,
  ): Effect.Effect<void, E | SqlError, R> =>
    Effect.zipRight(
      settled(inFlight),
      // The yield lets the batch's handling run to its first wait (a statement sent to the
      // store) before the next read, which on SQLite holds the thread until it is done.
      Effect.flatMap(Effect.fork(onBatch(rows)), (handling) =>
        Effect.zipRight(Effect.yieldNow(), next(handling)),
      ),
    )
  return sql.onDialectOrElse({
    pg: () => {
      const cursor = `petstore_copy_${table.name}`
      const fetch = (inFlight: InFlight<E>): Effect.Effect<void, E | SqlError, R> =>
        Effect.flatMap(
          read(sql.unsafe(`FETCH FORWARD ${batchSize} FROM ${cursor}`).values),
          (rows) => (rows.length === 0 ? settled(inFlight) : handOver(rows, inFlight, fetch)),
        )
      return Effect.zipRight(
        read(
          sql.unsafe(
            `DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${columns} FROM ${table.name} ORDER BY ${order}`,
          ),
        ),
        Effect.zipRight(fetch(undefined), read(sql.unsafe(`CLOSE ${cursor}`))),
      )
    },
    orElse: () => {
      const keyIndexes = table.key.map((key) =>
        table.columns.findIndex((column) => column.name === key),
      )
      const page = (
        after: Row | undefined,
        inFlight: InFlight<E>,
      ): Effect.Effect<void, E | SqlError, R> =>
        Effect.flatMap(
          read(
            after === undefined
              ? sql.unsafe(`SELECT ${columns} FROM ${table.name} ORDER BY ${order} LIMIT ?`, [
                  batchSize,
                ]).values
              : sql.unsafe(
                  `SELECT ${columns} FROM ${table.name} WHERE (${order}) > (${table.key.map(() => "?").join(", ")})
                   ORDER BY ${order} LIMIT ?`,
                  [...after, batchSize],
                ).values,
          ).pipe(safeIntegers),
          (rows) => {
            const last = rows.at(-1)
            if (last === undefined) return settled(inFlight)
            return handOver(rows, inFlight, (handling) =>
              rows.length < batchSize
                ? settled(handling)
                : page(
                    keyIndexes.map((index) => last[index]),
                    handling,
                  ),
            )
          },
        )
      return page(undefined, undefined)
    },
  })
}

const integerText = /^-?\d+$/

/** A bigint column's value as SQLite binds it exactly: a bigint. */
const toSqliteInteger = (value: unknown): unknown =>
  typeof value === "string" && integerText.test(value)
    ? BigInt(value)
    : typeof value === "number" && Number.isSafeInteger(value)
      ? BigInt(value)
      : value

/** A bigint column's value as PostgreSQL takes it exactly: decimal text. */
const toPostgresInteger = (value: unknown): unknown =>
  typeof value === "bigint" || typeof value === "number" ? value.toString() : value

/** The most rows one SQLite `INSERT` takes: its parameters stay far below SQLite's 32,766. */
const sqliteRowsPerStatement = 1000

/**
 * Inserts `rows` into `table`, ids and all: on SQLite multi-row `INSERT`s of up to 1,000 rows;
 * on PostgreSQL one `INSERT … SELECT FROM unnest(…)`, an array per column, whatever the number
 * of rows. Never a statement per row.
 */
export const insertRows = (
  sql: SqlClient.SqlClient,
  table: StoreTable,
  rows: ReadonlyArray<Row>,
): Effect.Effect<void, SqlError> => {
  if (rows.length === 0) return Effect.void
  const columns = columnList(table)
  return sql.onDialectOrElse({
    pg: () => {
      const arrays = table.columns.map((column, index) =>
        rows.map((row) =>
          column.type === "bigint" ? toPostgresInteger(row[index]) : (row[index] ?? null),
        ),
      )
      const unnest = table.columns
        .map((column, index) => `$${index + 1}::${column.type}[]`)
        .join(", ")
      return Effect.asVoid(
        sql.unsafe(
          `INSERT INTO ${table.name} (${columns}) OVERRIDING SYSTEM VALUE
           SELECT * FROM unnest(${unnest})`,
          arrays,
        ),
      )
    },
    orElse: () => {
      const placeholders = `(${table.columns.map(() => "?").join(", ")})`
      const statements: Array<Effect.Effect<unknown, SqlError>> = []
      for (let start = 0; start < rows.length; start += sqliteRowsPerStatement) {
        const chunk = rows.slice(start, start + sqliteRowsPerStatement)
        const params = chunk.flatMap((row) =>
          table.columns.map((column, index) =>
            column.type === "bigint" ? toSqliteInteger(row[index]) : (row[index] ?? null),
          ),
        )
        statements.push(
          sql.unsafe(
            `INSERT INTO ${table.name} (${columns}) VALUES ${chunk.map(() => placeholders).join(", ")}`,
            params,
          ),
        )
      }
      return Effect.asVoid(Effect.all(statements, { discard: true }))
    },
  })
}

/** Deletes every row of the store's data, in an order its references allow. */
export const deleteRows = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  Effect.forEach([...storeTables].reverse(), (table) => sql.unsafe(`DELETE FROM ${table.name}`), {
    discard: true,
  })

/**
 * The id new pets continue above: the highest one ever given, which is the id sequence's (SQLite
 * `sqlite_sequence`, the PostgreSQL identity's sequence) or, should that lag, the highest id
 * stored; 0 when none was ever given. A PostgreSQL sequence is outside transactions, so within a
 * snapshot this may be above every id the snapshot sees: never below.
 */
export const lastPetId = (sql: SqlClient.SqlClient): Effect.Effect<bigint, SqlError> =>
  Effect.map(
    safeIntegers(
      sql.onDialectOrElse({
        pg: () =>
          sql`SELECT GREATEST(
                COALESCE((SELECT max(id) FROM pets), 0),
                COALESCE(pg_sequence_last_value(pg_get_serial_sequence('pets', 'id')::regclass), 0)
              )::text AS last`,
        orElse: () =>
          sql`SELECT max(
                COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'pets'), 0),
                COALESCE((SELECT max(id) FROM pets), 0)
              ) AS last`,
      }),
    ),
    (rows) => {
      const last = rows[0]?.["last"]
      return typeof last === "bigint" || typeof last === "string" || typeof last === "number"
        ? BigInt(last)
        : 0n
    },
  )

/**
 * Makes new ids continue above `lastId`, never moving the sequence back: an id the store gave
 * before stays given. Run last before `COMMIT`: a PostgreSQL sequence does not roll back, so an
 * interrupted restore can at most have made ids skip.
 */
export const continueIdsAbove = (
  sql: SqlClient.SqlClient,
  lastId: bigint,
): Effect.Effect<void, SqlError> => {
  if (lastId <= 0n) return Effect.void
  const last = lastId.toString()
  return sql.onDialectOrElse({
    pg: () =>
      Effect.asVoid(
        sql`SELECT setval(
              pg_get_serial_sequence('pets', 'id'),
              GREATEST(${last}::bigint,
                COALESCE(pg_sequence_last_value(pg_get_serial_sequence('pets', 'id')::regclass), 0)))`,
      ),
    orElse: () =>
      Effect.zipRight(
        sql`INSERT INTO sqlite_sequence (name, seq)
            SELECT 'pets', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'pets')`,
        sql`UPDATE sqlite_sequence SET seq = max(seq, ${lastId}) WHERE name = 'pets'`,
      ),
  })
}

/**
 * `effect` in one transaction that holds the store's write lock from its first statement, so
 * that what it reads stays true until it commits while other processes may be running: on
 * SQLite `BEGIN IMMEDIATE` (a deferred `BEGIN` that reads first fails when another connection
 * writes in between), on PostgreSQL a transaction in which `lockForWriting` takes the tables.
 * Transactions `effect` opens are savepoints of this one.
 */
export const inWriteTransaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError, R> =>
  sql.onDialectOrElse({
    pg: () => inTransaction(sql, effect),
    orElse: () =>
      Effect.scoped(
        Effect.acquireUseRelease(
          Effect.tap(sql.reserve, (connection) =>
            connection.executeUnprepared("BEGIN IMMEDIATE", [], undefined),
          ),
          (connection) =>
            Effect.tap(
              Effect.provideService(effect, SqlClient.TransactionConnection, [connection, 0]),
              () => connection.executeUnprepared("COMMIT", [], undefined),
            ),
          (connection, exit) =>
            Exit.isSuccess(exit)
              ? Effect.void
              : Effect.ignore(connection.executeUnprepared("ROLLBACK", [], undefined)),
        ),
      ),
  })

/**
 * Inside `inWriteTransaction`, once the schema exists: on PostgreSQL locks the store's tables
 * against every other writer (a create batch, a key created or revoked, a freeze), readers going
 * on; SQLite's lock is held already.
 */
export const lockForWriting = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  sql.onDialectOrElse({
    pg: () =>
      Effect.asVoid(
        sql`LOCK TABLE pets, idempotency_keys, api_keys, petstore_freeze IN EXCLUSIVE MODE`,
      ),
    orElse: () => Effect.void,
  })
