import { StorageUnavailable } from "@petstore/core"
import { Cause } from "effect"
import { describeStorageChoice, type StorageChoice } from "./storage-selection.js"

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

const hints: Record<StorageChoice["kind"], string> = {
  memory: "",
  sqlite:
    "Check the path in PETSTORE_STORAGE and that this user may create the file and its directory and write to them.",
  postgres:
    "Check that PostgreSQL is running and reachable, and that the database, user and password in PETSTORE_STORAGE are right.",
}

/**
 * Why the storage could not be opened, as one paragraph for a person: the storage (without
 * secrets), each underlying reason, and what to check.
 */
export const explainStorageFailure = (
  choice: StorageChoice,
  cause: Cause.Cause<StorageUnavailable>,
): string => {
  const reasons = reasonsOf(Cause.squash(cause))
    .map((reason) => reason.trim())
    .filter((reason, index, all) => reason !== "" && !all.slice(0, index).includes(reason))
  const because = reasons.length > 0 ? `: ${reasons.join(": ")}` : ""
  return `cannot open storage (${describeStorageChoice(choice)})${because}. ${hints[choice.kind]}`.trim()
}
