import { StorageUnavailable } from "@petstore/core"
import { storageFailureReasons } from "@petstore/storage"
import { Cause, Data } from "effect"

/**
 * A `storage` command refused or failed, as one paragraph for the person who ran it: what, on
 * which file or store, and what to do. Nothing has changed when it is raised.
 */
export class StorageCommandFailure extends Data.TaggedError("StorageCommandFailure")<{
  readonly message: string
}> {}

/** The reasons behind a driver or file failure, outermost first, as one clause; never a stack. */
export const reasonsOf = (cause: unknown): string =>
  storageFailureReasons(Cause.fail(new StorageUnavailable({ cause }))).join(": ") ||
  "no reason was given"

/** A failure that says `what` failed, and why. */
export const failedBecause =
  (what: string) =>
  (cause: unknown): StorageCommandFailure =>
    new StorageCommandFailure({ message: `${what}: ${reasonsOf(cause)}` })
