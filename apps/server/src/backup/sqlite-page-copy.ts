import Database from "better-sqlite3"
import { Effect } from "effect"
import { failedBecause, type StorageCommandFailure } from "./StorageCommandFailure.js"

/** Pages per step once the copy has begun: all of them, as no step can restart it. */
const allRemainingPages = 0x7fffffff

/**
 * Copies the SQLite store `source` page by page into the file `destination` with SQLite's online
 * backup API, under one read transaction held from before the first page to after the last: the
 * copy is the store as that transaction began. In WAL mode it blocks no writer and waits for
 * none. Held across the copy, it also keeps the copy from starting over, which the backup API
 * does whenever another connection commits between its steps (a busy server commits every few
 * milliseconds). The store is opened read-only: a backup never writes to it.
 */
export const copyPages = (
  source: string,
  destination: string,
): Effect.Effect<void, StorageCommandFailure> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => new Database(source, { readonly: true, fileMustExist: true }),
      catch: failedBecause(`${source} cannot be opened`),
    }),
    (store) =>
      Effect.tryPromise({
        try: () => {
          store.exec("BEGIN")
          store.prepare("SELECT count(*) FROM sqlite_schema").get()
          return store.backup(destination, { progress: () => allRemainingPages })
        },
        catch: failedBecause(`${source} cannot be copied`),
      }),
    (store) => Effect.sync(() => store.close()),
  )
