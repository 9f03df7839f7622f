import { Context, type Effect, type Option } from "effect"
import type { IdempotencyKeyInUse, IdempotencyKeyReused, StorageUnavailable } from "./errors.js"
import type { IdempotencyClaim } from "./Idempotency.js"
import type { Limit } from "./Limit.js"
import type { NewPet, Pet, PetId, PetStatus } from "./Pet.js"

/** Which pets a listing asks for, in ascending id order. */
export interface PetSlice {
  /** Only pets with this status, when given. */
  readonly status: Option.Option<PetStatus>
  /** Only pets whose id is greater than this, when given. */
  readonly afterId: Option.Option<PetId>
  /** The most pets to return. */
  readonly limit: Limit
}

/** What a repository answers for a slice. */
export interface PetSlicePage {
  /** The first pets of the slice, at most `limit` of them, in ascending id order. */
  readonly pets: ReadonlyArray<Pet>
  /** Whether more pets of the slice follow the last of `pets`. */
  readonly hasMore: boolean
}

/** A pet a create answered with: new, or the one an earlier create with the same key made. */
export interface CreatedPet {
  readonly pet: Pet
  /** Whether the pet was made by an earlier create with the same idempotency key. */
  readonly replayed: boolean
}

/**
 * Where pets are kept. Adapters (in-memory, SQLite, PostgreSQL, your own) provide it as a
 * layer; its methods need nothing further because an adapter resolves its dependencies when
 * its layer is built.
 */
export class PetRepository extends Context.Tag("@petstore/core/PetRepository")<
  PetRepository,
  {
    /** Stores a pet under a new id, greater than every id assigned before it. */
    readonly create: (pet: NewPet) => Effect.Effect<Pet, StorageUnavailable>
    /**
     * Creates the pet unless the claim's key already created one in its scope, atomically: the
     * key is stored in the same transaction as the pet, so neither is ever kept without the
     * other. A key already used for the same pet (equal fingerprint) answers that pet with
     * `replayed: true`; for another pet it fails with `IdempotencyKeyReused`. While a create
     * with the same key and scope is in flight, another may fail with `IdempotencyKeyInUse` or
     * wait for it and replay it; it never creates a second pet. Keys are forgotten after the
     * adapter's retention time, and only successful creates are remembered.
     */
    readonly createOnce: (
      pet: NewPet,
      claim: IdempotencyClaim,
    ) => Effect.Effect<CreatedPet, StorageUnavailable | IdempotencyKeyReused | IdempotencyKeyInUse>
    readonly findById: (id: PetId) => Effect.Effect<Option.Option<Pet>, StorageUnavailable>
    readonly list: (slice: PetSlice) => Effect.Effect<PetSlicePage, StorageUnavailable>
  }
>() {}
