import type { StorageUnavailable } from "@petstore/core"
import { storageFailureReasons } from "@petstore/storage"
import { isFrozenRefusal } from "@petstore/storage/sql"
import { Cause } from "effect"
import { describeStorageChoice, type StorageChoice } from "./storage-selection.js"

const hints: Record<StorageChoice["kind"], string> = {
  memory: "",
  sqlite:
    "Check the path in PETSTORE_STORAGE and that this user may create the file and its directory and write to them.",
  postgres:
    "Check that PostgreSQL is running and reachable, and that the database, user and password in PETSTORE_STORAGE are right.",
}

/**
 * Why the storage could not be opened, or refused a write because it is frozen, as one paragraph
 * for a person: the storage (without secrets), each underlying reason, and what to check.
 */
export const explainStorageFailure = (
  choice: StorageChoice,
  cause: Cause.Cause<StorageUnavailable>,
): string => {
  // A frozen store opened fine: it refused a write, and says what undoes it.
  if (isFrozenRefusal(Cause.squash(cause))) {
    return `${describeStorageChoice(choice)} is frozen: it takes no new pets and no key changes until npm run storage -- thaw (with this PETSTORE_STORAGE).`
  }
  const reasons = storageFailureReasons(cause)
  const because = reasons.length > 0 ? `: ${reasons.join(": ")}` : ""
  return `cannot open storage (${describeStorageChoice(choice)})${because}. ${hints[choice.kind]}`.trim()
}
