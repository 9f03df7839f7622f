import type {
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  PetNotFound,
  StorageUnavailable,
} from "@petstore/core"
import { apiError, type ApiError } from "../vocabulary/api-error.js"
import type { ErrorCode } from "../vocabulary/error-catalogue.js"
import { retryAfterSeconds } from "../vocabulary/headers.js"

/** Every failure a use case can name, by its tag. */
export interface DomainErrors {
  readonly PetNotFound: PetNotFound
  readonly StorageUnavailable: StorageUnavailable
  readonly IdempotencyKeyReused: IdempotencyKeyReused
  readonly IdempotencyKeyInUse: IdempotencyKeyInUse
}

export type DomainError = DomainErrors[keyof DomainErrors]

interface Mapping<E> {
  readonly code: ErrorCode
  readonly message: (error: E) => string
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * The one place a domain failure becomes an HTTP answer. The mapped type is exhaustive: a new
 * error in `DomainErrors` fails the build here until it is mapped.
 */
const mappings: { readonly [Tag in keyof DomainErrors]: Mapping<DomainErrors[Tag]> } = {
  PetNotFound: { code: "pet_not_found", message: (error) => `no pet has id ${error.id}` },
  StorageUnavailable: {
    code: "storage_unavailable",
    message: () => "storage is unavailable; try again shortly",
    headers: { "Retry-After": String(retryAfterSeconds) },
  },
  IdempotencyKeyReused: {
    code: "idempotency_key_reused",
    message: (error) =>
      `Idempotency-Key "${error.key}" was already used to create a different pet; send a new key for a new pet`,
  },
  IdempotencyKeyInUse: {
    code: "idempotency_key_in_use",
    message: (error) =>
      `a create with Idempotency-Key "${error.key}" is still in flight; retry shortly to get its answer`,
    headers: { "Retry-After": String(retryAfterSeconds) },
  },
}

export interface ErrorResponse {
  readonly error: ApiError
  readonly headers: Readonly<Record<string, string>>
}

const responseOf = <Tag extends keyof DomainErrors>(
  tag: Tag,
  error: DomainErrors[Tag],
): ErrorResponse => {
  const mapping: Mapping<DomainErrors[Tag]> = mappings[tag]
  return { error: apiError(mapping.code, mapping.message(error)), headers: mapping.headers ?? {} }
}

export const domainErrorResponse = (error: DomainError): ErrorResponse =>
  responseOf(error._tag, error)

/** The error code a domain failure is answered with. */
export const domainErrorCode = (tag: keyof DomainErrors): ErrorCode => mappings[tag].code
