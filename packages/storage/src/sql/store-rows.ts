import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Exit, Fiber, FiberRef } from "effect"
import { inTransaction } from "./store-transaction.js"

/**
 * The store's rows, table by table, as backups and restores copy them: every column, in the
 * order of the primary key, in batches, on either engine, each batch as text the databases
 * write and read themselves (see `BatchFormat`): the copy costs this process a few strings per
 * batch, not work per row.
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
 * How a batch of rows travels: as text one database writes and the other reads itself, so that
 * no row passes through a JavaScript object and no value is converted on the way (64-bit
 * integers stay exact). For SQLite one JSON array of rows, each an array of the table's columns'
 * values in `columns` order (`json_each` reads it); for PostgreSQL one array literal per column,
 * what `unnest` takes (of what an `INSERT` can read, the cheapest to parse after `COPY`).
 */
export type BatchFormat = "json rows" | "postgres arrays"

/** The format the store `sql` reads batches in. */
export const batchFormatFor = (sql: SqlClient.SqlClient): BatchFormat =>
  sql.onDialectOrElse({ pg: () => "postgres arrays", orElse: () => "json rows" })

/** A batch of one table's rows: one text in `json rows`, one per column in `postgres arrays`. */
export interface RowBatch {
  readonly format: BatchFormat
  readonly texts: ReadonlyArray<string>
  readonly rows: number
}

/**
 * The batch `onBatch` was given last, still being handled: the next batch is read meanwhile (a
 * restore reads the backup file while the store inserts the batch before), then it is waited for
 * before the next `onBatch` starts.
 */
type InFlight<E> = Fiber.Fiber<void, E> | undefined

const settled = <E>(inFlight: InFlight<E>): Effect.Effect<void, E> =>
  inFlight === undefined ? Effect.void : Fiber.join(inFlight)

/** SQLite: a column's values as a PostgreSQL array literal (`{1,NULL}`, `{"a\"b",NULL}`). */
const sqliteArrayLiteral = (column: Column) => {
  const element =
    column.type === "bigint"
      ? `coalesce(CAST(${column.name} AS TEXT), 'NULL')`
      : `CASE WHEN ${column.name} IS NULL THEN 'NULL'
         ELSE '"' || replace(replace(${column.name}, '\\', '\\\\'), '"', '\\"') || '"' END`
  return `'{' || group_concat(${element}, ',') || '}'`
}

/**
 * The aggregates that make a page's batch in `format`, one per text. They run in one aggregate
 * query, one pass over the page, so every text lists the rows in the same order (which order
 * does not matter to an insert, and leaving it to the scan spares a sort per text).
 */
const batchAggregates = (
  sql: SqlClient.SqlClient,
  table: StoreTable,
  format: BatchFormat,
): ReadonlyArray<string> => {
  const columns = columnList(table)
  return sql.onDialectOrElse({
    pg: () =>
      format === "json rows"
        ? [`json_agg(json_build_array(${columns}))::text`]
        : table.columns.map((column) => `array_agg(${column.name})::text`),
    orElse: () =>
      format === "json rows"
        ? [`json_group_array(json_array(${columns}))`]
        : table.columns.map(sqliteArrayLiteral),
  })
}

/**
 * One page of `table` after the key `after` (from the start when `undefined`): the page as a
 * `RowBatch` in `format`, and its last row's key. One statement: the page is read once,
 * aggregated by the database, and its last key picked from it.
 */
const pageStatement = (
  sql: SqlClient.SqlClient,
  table: StoreTable,
  format: BatchFormat,
  after: ReadonlyArray<unknown> | undefined,
  batchSize: number,
) => {
  const pg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  let placeholders = 0
  const next = () => (pg ? `$${++placeholders}` : "?")
  const order = table.key.join(", ")
  const where = after === undefined ? "" : `WHERE (${order}) > (${table.key.map(next).join(", ")})`
  const limit = next()
  const aggregates = batchAggregates(sql, table, format)
  const texts = aggregates.map((aggregate, index) => `${aggregate} AS text_${index}`).join(", ")
  const descending = table.key.map((key) => `${key} DESC`).join(", ")
  const lastKey = table.key
    .map(
      (key, index) => `(SELECT ${key} FROM page ORDER BY ${descending} LIMIT 1) AS last_${index}`,
    )
    .join(", ")
  return sql
    .unsafe<Record<string, unknown>>(
      `WITH page AS MATERIALIZED (
         SELECT ${columnList(table)} FROM ${table.name} ${where} ORDER BY ${order} LIMIT ${limit}
       )
       SELECT ${texts}, count(*) AS row_count, ${lastKey} FROM page`,
      [...(after ?? []), batchSize],
    )
    .pipe(
      safeIntegers,
      Effect.map((result) => {
        const row = result[0]
        const texts = aggregates.map((_, index) => row?.[`text_${index}`])
        return {
          batch: {
            format,
            texts: texts.map((text) => (typeof text === "string" ? text : "")),
            // An empty page aggregates to NULL.
            rows: texts.every((text) => typeof text === "string") ? countOf(row?.["row_count"]) : 0,
          },
          last: table.key.map((_, index) => row?.[`last_${index}`]),
        }
      }),
    )
}

/**
 * Reads every row of `table` in key order, `batchSize` at a time (pages of the primary key), in
 * `format`, handing each batch to `onBatch`, one at a time and in order, while the next batch is
 * read: never more than two batches in memory. Inside `inSnapshot`, every page is of the same
 * snapshot.
 */
export const readBatches = <E, R>(
  sql: SqlClient.SqlClient,
  table: StoreTable,
  batchSize: number,
  format: BatchFormat,
  onBatch: (batch: RowBatch) => Effect.Effect<void, E, R>,
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
  const page = (
    after: ReadonlyArray<unknown> | undefined,
    inFlight: InFlight<E>,
  ): Effect.Effect<void, E | SqlError, R> =>
    Effect.flatMap(read(pageStatement(sql, table, format, after, batchSize)), ({ batch, last }) => {
      if (batch.rows === 0) return settled(inFlight)
      return Effect.zipRight(
        settled(inFlight),
        // The yield lets the batch's handling run to its first wait (a statement sent to the
        // store) before the next read, which on SQLite holds the thread until it is done.
        Effect.flatMap(Effect.fork(onBatch(batch)), (handling) =>
          Effect.zipRight(
            Effect.yieldNow(),
            batch.rows < batchSize ? settled(handling) : page(last, handling),
          ),
        ),
      )
    })
  return page(undefined, undefined)
}

/**
 * Inserts a batch into `table`, ids and all, in one statement whatever its size: PostgreSQL
 * `unnest`s its arrays, SQLite reads its JSON with `json_each` (`->>` gives a 64-bit integer
 * exactly). The batch must be in `batchFormatFor(sql)`.
 */
export const insertBatch = (
  sql: SqlClient.SqlClient,
  table: StoreTable,
  batch: RowBatch,
): Effect.Effect<void, SqlError> => {
  if (batch.rows === 0) return Effect.void
  if (batch.format !== batchFormatFor(sql)) {
    return Effect.dieMessage(`a batch in ${batch.format} cannot be inserted into this store`)
  }
  const columns = columnList(table)
  return Effect.asVoid(
    sql.onDialectOrElse({
      pg: () =>
        sql.unsafe(
          `INSERT INTO ${table.name} (${columns}) OVERRIDING SYSTEM VALUE
           SELECT * FROM unnest(${table.columns.map((column, index) => `$${index + 1}::${column.type}[]`).join(", ")})`,
          batch.texts,
        ),
      orElse: () =>
        sql.unsafe(
          `INSERT INTO ${table.name} (${columns})
           SELECT ${table.columns.map((_, index) => `row.value ->> ${index}`).join(", ")}
           FROM json_each(?) AS row`,
          batch.texts,
        ),
    }),
  )
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
