import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as PgClient from "@effect/sql-pg/PgClient"
import { PetRepository, StorageUnavailable } from "@petstore/core"
import { Duration, Effect, Layer, Redacted, type Scope } from "effect"
import * as SqlPetRepository from "./SqlPetRepository.js"

export interface PostgresPetRepositoryOptions extends SqlPetRepository.SqlPetRepositoryOptions {
  /** A `postgres://user:password@host:port/database` URL. */
  readonly url: Redacted.Redacted<string> | string
  /** The most connections this process opens; 10 unless given. */
  readonly maxConnections?: number
  /** How long to wait for a connection before failing with `StorageUnavailable`; 5 s unless given. */
  readonly connectTimeout?: Duration.DurationInput
}

/**
 * Connects to PostgreSQL (refusing to start when it cannot) and returns the repository on it;
 * the connection pool closes with the scope. Several processes may share one database.
 */
export const make = (
  options: PostgresPetRepositoryOptions,
): Effect.Effect<PetRepository["Type"], StorageUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* PgClient.make({
      url: Redacted.isRedacted(options.url) ? options.url : Redacted.make(options.url),
      maxConnections: options.maxConnections ?? 10,
      connectTimeout: options.connectTimeout ?? Duration.seconds(5),
      applicationName: "petstore",
    }).pipe(
      Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
      Effect.mapError((error) => new StorageUnavailable({ cause: error })),
      // The driver throws on a URL it cannot parse: a store we cannot open, not a bug here.
      Effect.catchAllDefect((cause) => Effect.fail(new StorageUnavailable({ cause }))),
    )
    return yield* SqlPetRepository.make(options).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
    )
  })

export const layer = (
  options: PostgresPetRepositoryOptions,
): Layer.Layer<PetRepository, StorageUnavailable> => Layer.scoped(PetRepository, make(options))
