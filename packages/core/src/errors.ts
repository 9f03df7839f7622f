import { Schema } from "effect"
import { IdempotencyKey } from "./Idempotency.js"
import { PetId } from "./Pet.js"

/** No pet has the requested id. */
export class PetNotFound extends Schema.TaggedError<PetNotFound>()("PetNotFound", {
  id: PetId,
}) {}

/**
 * The store could not be reached or refused the operation. Every adapter maps its driver's
 * failures to this one error, so the edge can answer "try again later" without knowing the driver.
 */
export class StorageUnavailable extends Schema.TaggedError<StorageUnavailable>()(
  "StorageUnavailable",
  { cause: Schema.Defect },
) {}

/** The idempotency key was already used, within its scope, to create a different pet. */
export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>()(
  "IdempotencyKeyReused",
  { key: IdempotencyKey },
) {}

/** A create with the same idempotency key, in the same scope, has not finished yet. */
export class IdempotencyKeyInUse extends Schema.TaggedError<IdempotencyKeyInUse>()(
  "IdempotencyKeyInUse",
  { key: IdempotencyKey },
) {}
