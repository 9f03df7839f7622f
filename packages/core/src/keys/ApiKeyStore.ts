import type { StorageUnavailable } from "../errors.js"
import { Context, Schema, type Effect, type Option } from "effect"

/** What `list` shows of a stored API key: never the key, never its hash. */
export interface ApiKeyRecord {
  readonly id: string
  readonly label: string
  /** Epoch milliseconds. */
  readonly createdAt: number
  /** Epoch milliseconds; recorded at most about once a minute per key. */
  readonly lastUsedAt: Option.Option<number>
}

/** A key to store: its id, its label and the SHA-256 of the key (64 lowercase hex digits). */
export interface NewApiKey {
  readonly id: string
  readonly label: string
  readonly hash: string
}

/** That a stored key was used at `at` (epoch milliseconds). */
export interface ApiKeyUse {
  readonly id: string
  readonly at: number
}

/** `revoke` was given an id no stored key has (never created, or already revoked). */
export class ApiKeyNotFound extends Schema.TaggedError<ApiKeyNotFound>()("ApiKeyNotFound", {
  id: Schema.String,
}) {}

/**
 * The API keys the service accepts besides those of its configuration, shared by every process
 * on one store. Only a hash of each key is kept: the store never sees a key. A revoked key is
 * deleted.
 */
export class ApiKeyStore extends Context.Tag("@petstore/core/ApiKeyStore")<
  ApiKeyStore,
  {
    /** Stores a key; its creation time is the store's clock. */
    readonly create: (key: NewApiKey) => Effect.Effect<ApiKeyRecord, StorageUnavailable>
    /**
     * Stores a key only when the store holds none, atomically across processes: what a server
     * starting for the first time does. `None` when a key was there already.
     */
    readonly createFirst: (
      key: NewApiKey,
    ) => Effect.Effect<Option.Option<ApiKeyRecord>, StorageUnavailable>
    /** Every key, oldest first. */
    readonly list: Effect.Effect<ReadonlyArray<ApiKeyRecord>, StorageUnavailable>
    readonly revoke: (id: string) => Effect.Effect<void, ApiKeyNotFound | StorageUnavailable>
    /** The id of the key whose hash this is, if one is stored. */
    readonly findIdByHash: (
      hash: string,
    ) => Effect.Effect<Option.Option<string>, StorageUnavailable>
    /** Moves each key's last-used time forward to the time given (never back). */
    readonly recordUses: (uses: ReadonlyArray<ApiKeyUse>) => Effect.Effect<void, StorageUnavailable>
  }
>() {}
