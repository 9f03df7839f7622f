import { Effect } from "effect"
import type { IdempotencyKeyInUse, IdempotencyKeyReused, StorageUnavailable } from "./errors.js"
import { petFingerprint, type Idempotency } from "./Idempotency.js"
import type { NewPet } from "./Pet.js"
import { PetRepository, type CreatedPet } from "./PetRepository.js"

/**
 * Adds a pet; the store assigns its id. With an idempotency key, a create the same principal
 * already made with that key is answered again (`replayed`) instead of made twice; the same key
 * for another pet fails with `IdempotencyKeyReused`, and while the first create with it is still
 * in flight a second may fail with `IdempotencyKeyInUse`.
 */
export const createPet = (
  pet: NewPet,
  idempotency?: Idempotency,
): Effect.Effect<
  CreatedPet,
  StorageUnavailable | IdempotencyKeyReused | IdempotencyKeyInUse,
  PetRepository
> =>
  Effect.flatMap(PetRepository, (repository) =>
    idempotency === undefined
      ? Effect.map(repository.create(pet), (created) => ({ pet: created, replayed: false }))
      : repository.createOnce(pet, { ...idempotency, fingerprint: petFingerprint(pet) }),
  )
