import type { StorageUnavailable } from "@petstore/core"
import { storageFailureReasons } from "@petstore/storage"
import type { Cause } from "effect"
import { describeStorageChoice, type StorageChoice } from "./storage-selection.js"

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
  const reasons = storageFailureReasons(cause)
  const because = reasons.length > 0 ? `: ${reasons.join(": ")}` : ""
  return `cannot open storage (${describeStorageChoice(choice)})${because}. ${hints[choice.kind]}`.trim()
}
