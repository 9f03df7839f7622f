import { constants } from "node:fs"
import { access, mkdir, stat } from "node:fs/promises"
import path from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { PetRepository, StorageUnavailable } from "@petstore/core"
import { Duration, Effect, Layer, type Scope } from "effect"
import { SqlPetRepository } from "@petstore/storage/sql"

export interface SqlitePetRepositoryOptions extends SqlPetRepository.SqlPetRepositoryOptions {
  /** The database file, resolved against the working directory; created, with its directory, if missing. */
  readonly filename: string
  /**
   * How long an operation waits for another connection's lock on the file before failing with
   * `StorageUnavailable`; 5 s unless given. It waits off the event loop (`lockWait`, which this
   * sets): the connection itself never waits.
   */
  readonly busyTimeout?: Duration.DurationInput
}

/** How the SQLite file is opened. */
export interface SqliteClientOptions {
  /** The database file, resolved against the working directory; created, with its directory, if missing. */
  readonly filename: string
  /**
   * How long a statement blocks the thread waiting for another connection's lock (`PRAGMA
   * busy_timeout`); 5 s unless given. `0` reports a held lock at once (`SQLITE_BUSY`), for
   * callers that wait off the event loop, as the repository and the key store do (`lockWait`):
   * a server's connection must be opened so, or one outside lock stops every request.
   */
  readonly busyTimeout?: Duration.DurationInput
}

export const defaultBusyTimeout = Duration.seconds(5)

const refuse = (problem: string) => (cause?: unknown) =>
  new StorageUnavailable({ cause: new Error(problem, { cause }) })

const exists = (file: string) =>
  Effect.promise(() =>
    access(file).then(
      () => true,
      () => false,
    ),
  )

const errorCode = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/**
 * Creates `directory` and its missing parents, one level at a time. Node's `mkdir(…, { recursive:
 * true })` never returns on a path under procfs (`/proc/nope`): it retries forever. Walking up
 * to the nearest existing ancestor first takes at most one step per path component, and names
 * the ancestor that is not a directory (`/dev/null` in `/dev/null/x.db`).
 */
const createDirectory = (directory: string) =>
  Effect.gen(function* () {
    const missing: Array<string> = []
    let current = directory
    for (;;) {
      const found = yield* Effect.promise(() =>
        stat(current).then(
          (stats) => (stats.isDirectory() ? "directory" : "other"),
          (error: unknown) => errorCode(error) ?? "unreadable",
        ),
      )
      if (found === "directory") break
      if (found === "other") {
        return yield* refuse(
          current === directory
            ? `${directory} is not a directory`
            : `${current} is not a directory, so ${directory} cannot be created`,
        )()
      }
      const parent = path.dirname(current)
      // ENOTDIR: a component further up is a file; the walk up finds it.
      if ((found !== "ENOENT" && found !== "ENOTDIR") || parent === current) {
        return yield* refuse(`the directory ${current} cannot be read (${found})`)()
      }
      missing.unshift(current)
      current = parent
    }
    for (const level of missing) {
      yield* Effect.tryPromise({
        try: () => mkdir(level),
        catch: refuse(`the directory ${directory} is missing and cannot be created`),
      })
    }
  })

/** Fails with a message that names the problem before SQLite gets to fail more obscurely. */
const prepareLocation = (filename: string) =>
  Effect.gen(function* () {
    const directory = path.dirname(filename)
    yield* createDirectory(directory)
    // In WAL mode SQLite creates its -wal and -shm files next to the database.
    yield* Effect.tryPromise({
      try: () => access(directory, constants.W_OK),
      catch: refuse(`the directory ${directory} is not writable`),
    })
    if (yield* exists(filename)) {
      yield* Effect.tryPromise({
        try: () => access(filename, constants.R_OK | constants.W_OK),
        catch: refuse(`the file ${filename} is not writable`),
      })
    }
  })

/**
 * WAL with `synchronous=FULL`: each commit is fsynced before it returns, so a 201 is on disk.
 * A statement blocks at most `busyTimeout` for a lock held by another connection.
 */
const configureConnection = (busyTimeout: Duration.DurationInput) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA busy_timeout = ${sql.literal(String(Math.round(Duration.toMillis(busyTimeout))))}`
    yield* sql`PRAGMA synchronous = FULL`
    const journalMode = (yield* sql`PRAGMA journal_mode`)[0]?.["journal_mode"]
    const synchronous = (yield* sql`PRAGMA synchronous`)[0]?.["synchronous"]
    if (journalMode !== "wal" || synchronous !== 2) {
      return yield* new StorageUnavailable({
        cause: new Error(
          `SQLite runs with journal_mode=${String(journalMode)} and synchronous=${String(synchronous)}; the store requires WAL and FULL (2)`,
        ),
      })
    }
  }).pipe(
    Effect.catchTag("SqlError", (error) => Effect.fail(new StorageUnavailable({ cause: error }))),
  )

/**
 * Opens (or creates) the SQLite file, configured as the store requires; the file closes with the
 * scope. The repository and the `ApiKeyStore` share it.
 */
export const makeClient = (
  options: SqliteClientOptions,
): Effect.Effect<SqlClient.SqlClient, StorageUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const filename = path.resolve(options.filename)
    yield* prepareLocation(filename)
    const client = yield* SqliteClient.make({ filename }).pipe(
      Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      // better-sqlite3 throws while opening a file it cannot use (not a database, say): that is
      // a store we cannot open, not a bug in this program.
      Effect.catchAllDefect((cause) => Effect.fail(new StorageUnavailable({ cause }))),
    )
    yield* configureConnection(options.busyTimeout ?? defaultBusyTimeout).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
    )
    return client
  })

/** Opens (or creates) the SQLite file and the repository on it; the file closes with the scope. */
export const make = (
  options: SqlitePetRepositoryOptions,
): Effect.Effect<PetRepository["Type"], StorageUnavailable, Scope.Scope> =>
  Effect.flatMap(makeClient({ filename: options.filename, busyTimeout: 0 }), (client) =>
    SqlPetRepository.make({
      ...options,
      ...(options.busyTimeout === undefined ? {} : { lockWait: options.busyTimeout }),
    }).pipe(Effect.provideService(SqlClient.SqlClient, client)),
  )

export const layer = (
  options: SqlitePetRepositoryOptions,
): Layer.Layer<PetRepository, StorageUnavailable> => Layer.scoped(PetRepository, make(options))
