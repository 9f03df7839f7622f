import { Schema } from "effect"
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
