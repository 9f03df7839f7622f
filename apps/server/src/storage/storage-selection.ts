import path from "node:path"
import type { PetRepository, StorageUnavailable } from "@petstore/core"
import { Either, Layer, Redacted } from "effect"
import type { ApiKeyStore } from "@petstore/core"
import { MemoryApiKeyStore, MemoryPetRepository } from "@petstore/storage"
import { sqlStoresLayer, type SqlPetRepository } from "@petstore/storage/sql"
import { PostgresPetRepository, readPostgresUrl } from "@petstore/storage-postgres"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { shownValue } from "../shown-value.js"

/** Which adapter backs the service, as parsed from `PETSTORE_STORAGE`. */
export type StorageChoice =
  | { readonly kind: "memory" }
  | { readonly kind: "sqlite"; /** Absolute. */ readonly filename: string }
  | { readonly kind: "postgres"; readonly url: Redacted.Redacted<string> }

const filePrefix = "file:"
const postgresProtocols = new Set(["postgres:", "postgresql:"])
const accepted = '"memory", "file:<path>" or a "postgres://…" URL'

// The text may hold a password: a refusal never echoes it.
const parsePostgresUrl = (text: string): Either.Either<StorageChoice, string> =>
  Either.match(readPostgresUrl(text), {
    onLeft: (reason) => Either.left(`PETSTORE_STORAGE ${reason}`),
    onRight: () => Either.right({ kind: "postgres", url: Redacted.make(text) }),
  })

/**
 * Reads a `PETSTORE_STORAGE` value: `memory`, `file:<path>` (an SQLite file; a relative path is
 * resolved against the working directory) or a `postgres://` / `postgresql://` URL.
 */
export const parseStorageChoice = (text: string): Either.Either<StorageChoice, string> => {
  if (text === "memory") return Either.right({ kind: "memory" })
  if (text.startsWith(filePrefix)) {
    const file = text.slice(filePrefix.length)
    return file === ""
      ? Either.left(`PETSTORE_STORAGE "file:" needs a path, such as file:./data/petstore.db`)
      : Either.right({ kind: "sqlite", filename: path.resolve(file) })
  }
  const protocol = /^[a-z]+:/i.exec(text)?.[0].toLowerCase()
  if (protocol !== undefined && postgresProtocols.has(protocol)) return parsePostgresUrl(text)
  return Either.left(`PETSTORE_STORAGE must be ${accepted}; ${shownValue(text)}`)
}

/** `PostgreSQL database "petstore" on db.example:5432 as app`: the URL without its secrets. */
const describePostgres = (url: Redacted.Redacted<string>): string =>
  Either.match(readPostgresUrl(Redacted.value(url)), {
    // A choice made by hand rather than by parseStorageChoice may hold any text.
    onLeft: () => "PostgreSQL (a URL that cannot be read)",
    onRight: ({ host, database, user }) =>
      [
        "PostgreSQL",
        database === "" ? "default database" : `database ${JSON.stringify(database)}`,
        host === "" ? "" : `on ${host}`,
        user === "" ? "" : `as ${user}`,
      ]
        .filter((part) => part !== "")
        .join(" "),
  })

/** How the start-up log names the storage, without secrets. */
export const describeStorageChoice = (choice: StorageChoice): string => {
  switch (choice.kind) {
    case "memory":
      return "in-memory (pets are lost when the process exits)"
    case "sqlite":
      return `SQLite file ${choice.filename}`
    case "postgres":
      return describePostgres(choice.url)
  }
}

/**
 * The adapter chosen, with the options given (`idempotencyTtl`; `groupCommit`, which the
 * in-memory adapter has no use for) if any, and the `ApiKeyStore` on the same storage (with
 * `memory`, one this process alone sees).
 */
export const storageLayer = (
  choice: StorageChoice,
  options: SqlPetRepository.SqlPetRepositoryOptions = {},
): Layer.Layer<PetRepository | ApiKeyStore, StorageUnavailable> => {
  switch (choice.kind) {
    case "memory":
      return Layer.merge(MemoryPetRepository.layerWith(options), MemoryApiKeyStore.layer)
    case "sqlite":
      // The connection never waits for a lock: the stores do, off the event loop.
      return sqlStoresLayer(
        SqlitePetRepository.makeClient({ filename: choice.filename, busyTimeout: 0 }),
        options,
      )
    case "postgres":
      return sqlStoresLayer(PostgresPetRepository.makeClient({ url: choice.url }), options)
  }
}
