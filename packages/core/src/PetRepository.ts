import { Context, type Effect, type Option } from "effect"
import type { StorageUnavailable } from "./errors.js"
import type { NewPet, Pet, PetId, PetStatus } from "./Pet.js"

/** One page of a listing, in ascending id order. */
export interface PetSlice {
  /** Only pets with this status, when given. */
  readonly status: Option.Option<PetStatus>
  /** Only pets whose id is greater than this, when given. */
  readonly afterId: Option.Option<PetId>
  /** The most pets to return; a positive integer. */
  readonly limit: number
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
    readonly findById: (id: PetId) => Effect.Effect<Option.Option<Pet>, StorageUnavailable>
    /** The first `limit` pets of the slice, ordered by ascending id. */
    readonly list: (slice: PetSlice) => Effect.Effect<ReadonlyArray<Pet>, StorageUnavailable>
  }
>() {}
