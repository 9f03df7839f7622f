import * as SqlClient from "@effect/sql/SqlClient"
import { PetRepository, type StorageUnavailable } from "@petstore/core"
import { Context, Effect, Layer, type Scope } from "effect"
import { ApiKeyStore } from "@petstore/core"
import * as SqlApiKeyStore from "./SqlApiKeyStore.js"
import * as SqlPetRepository from "./SqlPetRepository.js"

/**
 * The repository and the `ApiKeyStore` on one connection (or pool), opened by `client`; the
 * repository is made first, so the schema is migrated once before the key store is made.
 */
export const sqlStoresLayer = (
  client: Effect.Effect<SqlClient.SqlClient, StorageUnavailable, Scope.Scope>,
  options: SqlPetRepository.SqlPetRepositoryOptions,
): Layer.Layer<PetRepository | ApiKeyStore, StorageUnavailable> =>
  Layer.scopedContext(
    Effect.flatMap(client, (sql) =>
      Effect.gen(function* () {
        const pets = yield* SqlPetRepository.make(options)
        const keys = yield* SqlApiKeyStore.make
        return Context.make(PetRepository, pets).pipe(Context.add(ApiKeyStore, keys))
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
    ),
  )
