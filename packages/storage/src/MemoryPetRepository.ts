import { Clock, Effect, Layer, Option, type Scope } from "effect"
import {
  IdempotencyKeyReused,
  Pet,
  PetId,
  PetRepository,
  type CreatedPet,
  type NewPet,
  type PetStatus,
} from "@petstore/core"
import {
  claimId,
  idempotencyTtlMillis,
  purgeInBackground,
  type IdempotencyOptions,
} from "./idempotency-retention.js"

export type MemoryPetRepositoryOptions = IdempotencyOptions

interface StoredClaim {
  readonly fingerprint: string
  readonly pet: Pet
  /** Epoch milliseconds. */
  readonly createdAt: number
}

/** Index of the first pet in `pets` (sorted by ascending id) whose id is greater than `id`. */
const indexAfter = (pets: ReadonlyArray<Pet>, id: number): number => {
  let low = 0
  let high = pets.length
  while (low < high) {
    const middle = (low + high) >>> 1
    const middleId = pets[middle]?.id ?? Number.POSITIVE_INFINITY
    if (middleId <= id) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * Pets kept in this process's memory, lost when it exits. Ids are assigned in increasing
 * order and each pet is appended to the listing of all pets and to that of its status, so
 * every listing is sorted by id and a page costs O(log n + limit). Each operation runs
 * synchronously to completion, so concurrent fibers never see a half-made write: a
 * `createOnce` looks up its key, creates and remembers in one step, so a second create with
 * the same key never finds the first in flight and always replays it. Expired keys are
 * dropped by a fiber of the scope.
 */
export const make = (
  options: MemoryPetRepositoryOptions = {},
): Effect.Effect<PetRepository["Type"], never, Scope.Scope> =>
  Effect.gen(function* () {
    const ttl = idempotencyTtlMillis(options)
    const claims = new Map<string, StoredClaim>()
    const byId = new Map<number, Pet>()
    const all: Array<Pet> = []
    const byStatus = new Map<PetStatus, Array<Pet>>()
    let lastId = 0

    const listingOf = (status: PetStatus) => {
      const existing = byStatus.get(status)
      if (existing) return existing
      const created: Array<Pet> = []
      byStatus.set(status, created)
      return created
    }

    const store = (newPet: NewPet) => {
      lastId += 1
      // `newPet` was checked when it was made and ids count up from 1, so the pet is not
      // checked again (that costs more than the rest of a create here).
      const pet = new Pet({ ...newPet, id: PetId.make(lastId, true) }, true)
      byId.set(pet.id, pet)
      all.push(pet)
      if (pet.status !== undefined) listingOf(pet.status).push(pet)
      return pet
    }

    yield* purgeInBackground(
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          for (const [id, claim] of claims) {
            if (claim.createdAt <= now - ttl) claims.delete(id)
          }
        }),
      ),
      options,
    )

    return PetRepository.of({
      create: (newPet) => Effect.sync(() => store(newPet)),
      createOnce: (newPet, claim) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.suspend((): Effect.Effect<CreatedPet, IdempotencyKeyReused> => {
            const id = claimId(claim)
            const stored = claims.get(id)
            if (stored !== undefined && stored.createdAt > now - ttl) {
              return stored.fingerprint === claim.fingerprint
                ? Effect.succeed({ pet: stored.pet, replayed: true })
                : Effect.fail(new IdempotencyKeyReused({ key: claim.key }))
            }
            const pet = store(newPet)
            claims.set(id, { fingerprint: claim.fingerprint, pet, createdAt: now })
            return Effect.succeed({ pet, replayed: false })
          }),
        ),
      findById: (id) => Effect.sync(() => Option.fromNullable(byId.get(id))),
      list: ({ status, afterId, limit }) =>
        Effect.sync(() => {
          const listing = Option.match(status, {
            onNone: () => all,
            onSome: (wanted) => byStatus.get(wanted) ?? [],
          })
          const start = Option.match(afterId, {
            onNone: () => 0,
            onSome: (id) => indexAfter(listing, id),
          })
          return {
            pets: listing.slice(start, start + limit),
            hasMore: listing.length > start + limit,
          }
        }),
    })
  })

/** The repository with the given options. */
export const layerWith = (options: MemoryPetRepositoryOptions): Layer.Layer<PetRepository> =>
  Layer.scoped(PetRepository, make(options))

/** The repository with the default options. */
export const layer: Layer.Layer<PetRepository> = layerWith({})
