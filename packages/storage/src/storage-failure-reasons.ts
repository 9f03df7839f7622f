import { StorageUnavailable } from "@petstore/core"
import { Cause } from "effect"

/** The messages of an error and of the errors behind it, outermost first; never a stack. */
const reasonsOf = (error: unknown, seen: Set<unknown> = new Set()): ReadonlyArray<string> => {
  if (error === undefined || error === null || seen.has(error)) return []
  seen.add(error)
  if (error instanceof StorageUnavailable) return reasonsOf(error.cause, seen)
  // Connecting to a name with several addresses fails once per address.
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [error.errors.flatMap((inner: unknown) => reasonsOf(inner, seen)).join("; ")]
  }
  if (error instanceof Error) return [error.message, ...reasonsOf(error.cause, seen)]
  return [String(error)]
}

/**
 * Why storage could not be opened or answer, for a person: each underlying reason, outermost
 * first, repeats and blanks left out (`connect ECONNREFUSED 127.0.0.1:1`). Never a stack.
 */
export const storageFailureReasons = (
  cause: Cause.Cause<StorageUnavailable>,
): ReadonlyArray<string> =>
  reasonsOf(Cause.squash(cause))
    .map((reason) => reason.trim())
    .filter((reason, index, all) => reason !== "" && !all.slice(0, index).includes(reason))
