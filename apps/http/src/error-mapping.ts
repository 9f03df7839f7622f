import type { PetNotFound, StorageUnavailable } from "@petstore/core"
import { apiError, type ApiError } from "./api-error.js"

/** Every failure a use case can name. */
export type DomainError = PetNotFound | StorageUnavailable

export interface ErrorResponse {
  readonly error: ApiError
  readonly headers: Readonly<Record<string, string>>
}

/** Seconds a client should wait before retrying while storage is unavailable. */
export const storageRetryAfterSeconds = 1

/**
 * The one place a domain failure becomes an HTTP answer. The switch is exhaustive: a new
 * error in the domain fails the build here until it is mapped.
 */
export const errorResponseOf = (error: DomainError): ErrorResponse => {
  switch (error._tag) {
    case "PetNotFound":
      return { error: apiError(404, "pet_not_found", `no pet has id ${error.id}`), headers: {} }
    case "StorageUnavailable":
      return {
        error: apiError(503, "storage_unavailable", "storage is unavailable; try again shortly"),
        headers: { "Retry-After": String(storageRetryAfterSeconds) },
      }
  }
}
