import { PetRepository, type StorageUnavailable } from "@petstore/core"
import { Layer, type Effect } from "effect"

/**
 * A `PetRepository` whose every method ends as `failure` does: a `StorageUnavailable`, say,
 * or a defect (`Effect.die`). For testing how a caller answers a store that fails.
 */
export const failingRepository = (
  failure: Effect.Effect<never, StorageUnavailable>,
): Layer.Layer<PetRepository> =>
  Layer.succeed(
    PetRepository,
    PetRepository.of({
      create: () => failure,
      createOnce: () => failure,
      findById: () => failure,
      list: () => failure,
    }),
  )
