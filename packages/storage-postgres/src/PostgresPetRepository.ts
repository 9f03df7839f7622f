import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PetRepository, StorageUnavailable } from "@petstore/core"
import { Duration, Effect, Either, Layer, Redacted, type Scope } from "effect"
import { readPostgresUrl } from "./postgres-url.js"
import { SqlPetRepository } from "@petstore/storage/sql"

export interface PostgresPetRepositoryOptions extends SqlPetRepository.SqlPetRepositoryOptions {
  /** A `postgres://user:password@host:port/database` URL. */
  readonly url: Redacted.Redacted<string> | string
  /** The most connections this process opens; 10 unless given. */
  readonly maxConnections?: number
  /** How long to wait for a connection before failing with `StorageUnavailable`; 5 s unless given. */
  readonly connectTimeout?: Duration.DurationInput
  /** The longest one statement may run (PostgreSQL `statement_timeout`); 5 s unless given. */
  readonly statementTimeout?: Duration.DurationInput
  /** The longest a statement may wait for a lock (`lock_timeout`); 2 s unless given. */
  readonly lockTimeout?: Duration.DurationInput
  /**
   * How long a connection may sit idle inside a transaction before the server ends it
   * (`idle_in_transaction_session_timeout`); 10 s unless given.
   */
  readonly idleInTransactionTimeout?: Duration.DurationInput
}

/** The options of the connection alone. */
export type PostgresClientOptions = Omit<
  PostgresPetRepositoryOptions,
  keyof SqlPetRepository.SqlPetRepositoryOptions
>

export const defaultSessionTimeouts = {
  statementTimeout: Duration.seconds(5),
  lockTimeout: Duration.seconds(2),
  idleInTransactionTimeout: Duration.seconds(10),
}

const unopenable = (problem: string) =>
  new StorageUnavailable({ cause: new Error(`the URL ${problem}`) })

/**
 * The URL with the session timeouts as query parameters, which node-postgres sends as
 * connection parameters of every connection the pool opens (`@effect/sql-pg` has no option
 * for them). An option given wins over the URL's own parameter, which wins over the default.
 */
const withSessionTimeouts = (
  text: string,
  options: PostgresClientOptions,
): Either.Either<string, StorageUnavailable> =>
  Either.map(Either.mapLeft(readPostgresUrl(text), unopenable), () => {
    const url = new URL(text)
    const timeouts = [
      ["statement_timeout", options.statementTimeout, defaultSessionTimeouts.statementTimeout],
      ["lock_timeout", options.lockTimeout, defaultSessionTimeouts.lockTimeout],
      [
        "idle_in_transaction_session_timeout",
        options.idleInTransactionTimeout,
        defaultSessionTimeouts.idleInTransactionTimeout,
      ],
    ] as const
    for (const [name, given, fallback] of timeouts) {
      if (given === undefined && url.searchParams.has(name)) continue
      url.searchParams.set(name, String(Math.round(Duration.toMillis(given ?? fallback))))
    }
    return url.toString()
  })

/**
 * Connects to PostgreSQL (refusing to start when it cannot); the connection pool closes with the
 * scope. The repository and the `ApiKeyStore` share it.
 */
export const makeClient = (
  options: PostgresClientOptions,
): Effect.Effect<SqlClient.SqlClient, StorageUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const text = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
    const url = yield* withSessionTimeouts(text, options)
    const client = yield* PgClient.make({
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: options.connectTimeout ?? Duration.seconds(5),
      applicationName: "petstore",
    }).pipe(
      Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      Effect.mapError((error) => new StorageUnavailable({ cause: error })),
      // The driver throws on a URL it cannot parse: a store we cannot open, not a bug here.
      Effect.catchAllDefect((cause) => Effect.fail(new StorageUnavailable({ cause }))),
    )
    return client
  })

/**
 * Connects to PostgreSQL (refusing to start when it cannot) and returns the repository on it;
 * the connection pool closes with the scope. Several processes may share one database.
 */
export const make = (
  options: PostgresPetRepositoryOptions,
): Effect.Effect<PetRepository["Type"], StorageUnavailable, Scope.Scope> =>
  Effect.flatMap(makeClient(options), (client) =>
    SqlPetRepository.make(options).pipe(Effect.provideService(SqlClient.SqlClient, client)),
  )

export const layer = (
  options: PostgresPetRepositoryOptions,
): Layer.Layer<PetRepository, StorageUnavailable> => Layer.scoped(PetRepository, make(options))
