import type { StorageUnavailable } from "@petstore/core"
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, type Scope } from "effect"
import { ApiKeyStore } from "@petstore/core"
import { MemoryApiKeyStore } from "@petstore/storage"
import { SqlApiKeyStore } from "@petstore/storage/sql"
import { PostgresPetRepository } from "@petstore/storage-postgres"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import type { StorageChoice } from "./storage-selection.js"

const sqlLayer = (client: Effect.Effect<SqlClient.SqlClient, StorageUnavailable, Scope.Scope>) =>
  Layer.scoped(
    ApiKeyStore,
    Effect.flatMap(client, (sql) =>
      Effect.provideService(SqlApiKeyStore.make, SqlClient.SqlClient, sql),
    ),
  )

/**
 * The `ApiKeyStore` of the storage chosen, alone: for tools that manage keys beside a running
 * server, without the repository's background work (such as purging idempotency keys).
 */
export const apiKeyStoreLayer = (
  choice: StorageChoice,
): Layer.Layer<ApiKeyStore, StorageUnavailable> => {
  switch (choice.kind) {
    case "memory":
      return MemoryApiKeyStore.layer
    case "sqlite":
      return sqlLayer(SqlitePetRepository.makeClient({ filename: choice.filename }))
    case "postgres":
      return sqlLayer(PostgresPetRepository.makeClient({ url: choice.url, maxConnections: 1 }))
  }
}
