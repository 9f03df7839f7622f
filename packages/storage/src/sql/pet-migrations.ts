import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { frozenMessage } from "./frozen-refusal.js"

/** Where the applied migrations are recorded; named for this service so a shared database can hold others. */
const migrationsTable = "petstore_migrations"

const createPets = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Both engines assign ids, never above 2^53 − 1, and never hand out an id twice (SQLite's
  // AUTOINCREMENT, a PostgreSQL identity): the sequence keeps going even after a delete.
  yield* sql.onDialectOrElse({
    pg: () => sql`
      CREATE TABLE pets (
        id BIGINT GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) PRIMARY KEY,
        name TEXT NOT NULL,
        category_id BIGINT NOT NULL
          CHECK (category_id BETWEEN -9007199254740991 AND 9007199254740991),
        status TEXT CHECK (status IN ('available', 'pending', 'sold'))
      )`,
    orElse: () => sql`
      CREATE TABLE pets (
        id INTEGER PRIMARY KEY AUTOINCREMENT CHECK (id BETWEEN 1 AND 9007199254740991),
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL
          CHECK (category_id BETWEEN -9007199254740991 AND 9007199254740991),
        status TEXT CHECK (status IN ('available', 'pending', 'sold'))
      ) STRICT`,
  })
  // With the primary key this makes both listings O(limit): `WHERE id > ? ORDER BY id` walks
  // the key, `WHERE status = ? AND id > ? ORDER BY id` walks this index.
  yield* sql`CREATE INDEX pets_status_id ON pets (status, id)`
})

// A key is remembered with the pet it created and when (epoch milliseconds, from the
// repository's Clock), so that a retry is answered with that pet until the key expires.
const createIdempotencyKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        pet_id BIGINT NOT NULL REFERENCES pets (id),
        created_at BIGINT NOT NULL,
        PRIMARY KEY (scope, idempotency_key)
      )`,
    orElse: () => sql`
      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        pet_id INTEGER NOT NULL REFERENCES pets (id),
        created_at INTEGER NOT NULL,
        PRIMARY KEY (scope, idempotency_key)
      ) STRICT`,
  })
  // The background purge deletes by age.
  yield* sql`CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at)`
})

// Only a SHA-256 of each key is kept (hex), never the key. Times are epoch milliseconds; a
// revoked key's row is deleted.
const createApiKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql`
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
        created_at BIGINT NOT NULL,
        last_used_at BIGINT
      )`,
    orElse: () => sql`
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE
          CHECK (length(key_hash) = 64 AND key_hash NOT GLOB '*[^0-9a-f]*'),
        created_at INTEGER NOT NULL,
        last_used_at INTEGER
      ) STRICT`,
  })
})

// While `petstore_freeze` holds its row, every insert into `pets` and every key created or revoked
// is refused inside the writing statement itself, by every process on the store, from the moment
// the freeze commits (see store-freeze.ts). Reads, and the idempotency purge, go on.
const createStoreFreeze = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function* () {
        yield* sql`
          CREATE TABLE petstore_freeze (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            frozen_at BIGINT NOT NULL
          )`
        yield* sql.unsafe(`
          CREATE FUNCTION petstore_refuse_when_frozen() RETURNS trigger LANGUAGE plpgsql AS $body$
          BEGIN
            IF EXISTS (SELECT 1 FROM petstore_freeze) THEN
              RAISE EXCEPTION '${frozenMessage}' USING ERRCODE = '55000';
            END IF;
            RETURN NULL;
          END
          $body$`)
        yield* sql`
          CREATE TRIGGER petstore_frozen_pets BEFORE INSERT ON pets
          FOR EACH STATEMENT EXECUTE FUNCTION petstore_refuse_when_frozen()`
        yield* sql`
          CREATE TRIGGER petstore_frozen_api_keys BEFORE INSERT OR DELETE ON api_keys
          FOR EACH STATEMENT EXECUTE FUNCTION petstore_refuse_when_frozen()`
      }),
    orElse: () =>
      Effect.gen(function* () {
        yield* sql`
          CREATE TABLE petstore_freeze (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            frozen_at INTEGER NOT NULL
          ) STRICT`
        for (const [trigger, event] of [
          ["petstore_frozen_pets", "INSERT ON pets"],
          ["petstore_frozen_api_keys_insert", "INSERT ON api_keys"],
          ["petstore_frozen_api_keys_delete", "DELETE ON api_keys"],
        ] as const) {
          yield* sql.unsafe(`
            CREATE TRIGGER ${trigger} BEFORE ${event}
            WHEN EXISTS (SELECT 1 FROM petstore_freeze)
            BEGIN SELECT RAISE(ABORT, '${frozenMessage}'); END`)
        }
      }),
  })
})

const migrations = Migrator.fromRecord({
  "1_create_pets": createPets,
  "2_create_idempotency_keys": createIdempotencyKeys,
  "3_create_api_keys": createApiKeys,
  "4_create_store_freeze": createStoreFreeze,
})

/** The id of the newest migration: the schema version this code makes and reads. */
export const schemaVersion = 4

/** The longest a migration waits on PostgreSQL, for the lock or for any of its statements. */
const migrationWaitSeconds = 60

const runMigrations = Migrator.make({})({ loader: migrations, table: migrationsTable })

/**
 * Brings the schema up to date. On PostgreSQL several processes may start at once on one
 * database: they take turns under a transaction-scoped advisory lock, and the migrations table
 * is created first so the Migrator never probes for a missing table inside that transaction
 * (a failed statement would abort it).
 */
export const migrate = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.onDialectOrElse({
    pg: () =>
      sql.withTransaction(
        Effect.gen(function* () {
          // A store's own lock and statement timeouts (2 s and 5 s by default) bound what a
          // request waits for; a process starting while another migrates, or while a restore
          // holds the tables, may wait longer before it gives up.
          yield* sql`SET LOCAL lock_timeout = ${sql.literal(`'${migrationWaitSeconds}s'`)}`
          yield* sql`SET LOCAL statement_timeout = ${sql.literal(`'${migrationWaitSeconds}s'`)}`
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${migrationsTable}))`
          yield* sql`
            CREATE TABLE IF NOT EXISTS ${sql(migrationsTable)} (
              migration_id integer PRIMARY KEY,
              created_at timestamp with time zone NOT NULL DEFAULT now(),
              name text NOT NULL
            )`
          return yield* runMigrations
        }),
      ),
    orElse: () => runMigrations,
  })
})
