import { Cause, Effect, Exit, Layer, Option, type Tracer } from "effect"
import { StorageUnavailable } from "./errors.js"
import { PetRepository } from "./PetRepository.js"

/**
 * A failure as a span is told it: the error's tag without its fields. `IdempotencyKeyReused` and
 * `IdempotencyKeyInUse` hold the client's key, and a tracer writes a failed span's error, fields
 * and all, into its status and exception event.
 */
class FailureWithheldFromTraces extends Error {
  constructor(tag: string) {
    super(`${tag} (its fields are withheld from traces)`)
    this.name = tag
  }
}

/** `StorageUnavailable` carries the driver's failure and no client value, so it is kept whole. */
const forTraces = <E extends { readonly _tag: string }>(error: E) =>
  error instanceof StorageUnavailable ? error : new FailureWithheldFromTraces(error._tag)

const spanOptions = (attributes?: Record<string, unknown>): Tracer.SpanOptions => ({
  kind: "internal",
  attributes,
  // A stack trace per call costs more than the span; the name says where it was made.
  captureStackTrace: false,
})

/**
 * Runs `effect` in the span `name` (its statements' spans become children), adds what
 * `describe` says of its result, and ends the span with the outcome, its errors as `forTraces`
 * tells them.
 */
const inSpan = <A, E extends { readonly _tag: string }>(
  name: string,
  options: Tracer.SpanOptions,
  effect: Effect.Effect<A, E>,
  describe: (result: A) => Record<string, unknown>,
): Effect.Effect<A, E> =>
  Effect.flatMap(Effect.makeSpan(name, options), (span) =>
    Effect.withParentSpan(effect, span).pipe(
      Effect.tap((result) =>
        Effect.sync(() => {
          for (const [key, value] of Object.entries(describe(result))) span.attribute(key, value)
        }),
      ),
      Effect.onExit((exit) =>
        Effect.clockWith((clock) =>
          Effect.sync(() =>
            span.end(
              clock.unsafeCurrentTimeNanos(),
              Exit.mapErrorCause(exit, (cause) => Cause.map(cause, forTraces)),
            ),
          ),
        ),
      ),
    ),
  )

const nothing = () => ({})

/**
 * The repository with each method in an Effect span: `PetRepository.create`,
 * `PetRepository.createOnce`, `PetRepository.findById` and `PetRepository.list`, of kind
 * internal, the adapter's own spans (SQL statements, group commit) beneath them.
 *
 * The attributes describe the call's shape and outcome: the list's limit, whether it is filtered
 * by status or continues after a cursor, how many pets it returned and whether more follow;
 * whether a pet was found; whether a create was replayed (`petstore.idempotency.replayed`).
 * They never carry a pet id, a name, an idempotency key or scope, or anything else a client
 * chose: trace backends keep and index attributes for everyone who can read traces, keys are
 * credentials of a kind, and ids turn every trace into a distinct attribute value. A failure
 * other than `StorageUnavailable` reaches the span as its tag alone, for the same reason.
 */
export const tracePetRepository = (repository: PetRepository["Type"]): PetRepository["Type"] =>
  PetRepository.of({
    create: (pet) => inSpan("PetRepository.create", spanOptions(), repository.create(pet), nothing),
    createOnce: (pet, claim) =>
      inSpan(
        "PetRepository.createOnce",
        spanOptions(),
        repository.createOnce(pet, claim),
        (created) => ({ "petstore.idempotency.replayed": created.replayed }),
      ),
    findById: (id) =>
      inSpan("PetRepository.findById", spanOptions(), repository.findById(id), (found) => ({
        "petstore.pet.found": Option.isSome(found),
      })),
    list: (slice) =>
      inSpan(
        "PetRepository.list",
        spanOptions({
          "petstore.list.limit": slice.limit,
          "petstore.list.status_filtered": Option.isSome(slice.status),
          "petstore.list.after_cursor": Option.isSome(slice.afterId),
        }),
        repository.list(slice),
        (page) => ({
          "petstore.list.returned": page.pets.length,
          "petstore.list.has_more": page.hasMore,
        }),
      ),
  })

/**
 * Replaces the `PetRepository` it is given by `tracePetRepository` of it. Provide it over an
 * adapter's layer only when traces are exported: without it the adapter is used as it is, and
 * untraced requests pay nothing for spans.
 */
export const tracedPetRepositoryLayer: Layer.Layer<PetRepository, never, PetRepository> =
  Layer.effect(PetRepository, Effect.map(PetRepository, tracePetRepository))
