import { Schema } from "effect"
import type { NewPet } from "./Pet.js"

/**
 * A client's idempotency key (draft-ietf-httpapi-idempotency-key-header): 1 to 255 characters,
 * each a visible ASCII character (0x21–0x7E) other than `"` and `\`.
 */
export const IdempotencyKey = Schema.String.pipe(
  Schema.pattern(/^[\x21\x23-\x5B\x5D-\x7E]{1,255}$/),
  Schema.brand("IdempotencyKey"),
  Schema.annotations({
    identifier: "IdempotencyKey",
    description: "A key naming one create, so that retrying it never creates a second pet.",
    message: () => ({
      message: 'must be 1 to 255 visible ASCII characters (0x21–0x7E), without " or \\',
      override: true,
    }),
  }),
)
export type IdempotencyKey = typeof IdempotencyKey.Type

/** Whose keys these are: the same key under two scopes is two keys. */
export const IdempotencyScope = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(128),
  Schema.brand("IdempotencyScope"),
)
export type IdempotencyScope = typeof IdempotencyScope.Type

/** An idempotency key as the client sent it, with the scope of the principal that sent it. */
export interface Idempotency {
  readonly scope: IdempotencyScope
  readonly key: IdempotencyKey
}

/** What a repository stores with a key: the key and which pet it asked for. */
export interface IdempotencyClaim extends Idempotency {
  /** Equal for two creates of the same pet, different otherwise (`petFingerprint`). */
  readonly fingerprint: string
}

/**
 * The pet a create asks for, as one string: equal exactly when name, categoryId and status are
 * (a missing status differs from every status), whatever the order or spacing of the JSON sent.
 */
export const petFingerprint = (pet: NewPet): string =>
  JSON.stringify([pet.name, pet.categoryId, pet.status ?? null])
