import { randomBytes } from "node:crypto"
import { constants } from "node:fs"
import { link, lstat, mkdir, open, rm, unlink } from "node:fs/promises"
import path from "node:path"
import { Effect } from "effect"
import { failedBecause, StorageCommandFailure } from "./StorageCommandFailure.js"

const codeOf = (error: unknown): string | undefined =>
  error instanceof Error && "code" in error && typeof error.code === "string"
    ? error.code
    : undefined

/** What is at `file`: nothing, a regular file, or something else; never follows a symbolic link. */
export const whatIsAt = (
  file: string,
): Effect.Effect<"nothing" | "file" | "other", StorageCommandFailure> =>
  Effect.tryPromise({
    try: () =>
      lstat(file).then(
        (stats) => (stats.isFile() ? ("file" as const) : ("other" as const)),
        (error: unknown) => {
          if (codeOf(error) === "ENOENT") return "nothing" as const
          throw error
        },
      ),
    catch: failedBecause(`${file} cannot be examined`),
  })

/** The size of `file` in bytes. */
export const sizeOf = (file: string): Effect.Effect<number, StorageCommandFailure> =>
  Effect.tryPromise({
    try: () => lstat(file).then((stats) => stats.size),
    catch: failedBecause(`${file} cannot be examined`),
  })

/** A name beside `final`, hidden and unique to this run, for the file while it is being written. */
export const temporaryPathFor = (final: string): string =>
  path.join(
    path.dirname(final),
    `.${path.basename(final)}.partial-${process.pid}-${randomBytes(4).toString("hex")}`,
  )

/** Creates `file` empty, readable and writable by its owner alone (0600); fails if it exists. */
export const createPrivateFile = (file: string): Effect.Effect<void, StorageCommandFailure> =>
  Effect.tryPromise({
    try: async () => {
      const handle = await open(
        file,
        constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY,
        0o600,
      )
      await handle.chmod(0o600)
      await handle.close()
    },
    catch: failedBecause(`${file} cannot be created`),
  })

const fsync = (file: string, flags: number) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await open(file, flags)
      try {
        await handle.sync()
      } finally {
        await handle.close()
      }
    },
    catch: failedBecause(`${file} cannot be flushed to disk`),
  })

/** Removes `file` and the journal files SQLite may have left beside it; quiet when they are gone. */
export const removeDatabaseFile = (file: string): Effect.Effect<void> =>
  Effect.promise(() =>
    Promise.all(
      ["", "-journal", "-wal", "-shm"].map((suffix) => rm(`${file}${suffix}`, { force: true })),
    ).then(
      () => undefined,
      () => undefined,
    ),
  )

/**
 * Gives the finished `temporary` file its `final` name, durably and without ever replacing a
 * file: the data is flushed to disk first, the name is added with `link` (which fails rather
 * than replace an existing file, as `rename` would), the temporary name removed, and the
 * directory flushed so the new name survives a power cut.
 */
export const publish = (
  temporary: string,
  final: string,
  refusal: string,
): Effect.Effect<void, StorageCommandFailure> =>
  Effect.gen(function* () {
    yield* fsync(temporary, constants.O_RDONLY)
    yield* Effect.tryPromise({
      try: () => link(temporary, final),
      catch: (error) =>
        codeOf(error) === "EEXIST"
          ? new StorageCommandFailure({ message: refusal })
          : failedBecause(`${final} cannot be written`)(error),
    })
    yield* Effect.tryPromise({
      try: () => unlink(temporary),
      catch: failedBecause(`${temporary} cannot be removed`),
    })
    yield* fsync(path.dirname(final), constants.O_RDONLY | constants.O_DIRECTORY)
  })

/**
 * Makes `directory` if it is missing, as a server starting on a new file would, but one level
 * only: a path whose parent is missing is more likely a mistake than a wish.
 */
export const ensureDirectory = (directory: string): Effect.Effect<void, StorageCommandFailure> =>
  Effect.tryPromise({
    try: () =>
      mkdir(directory).then(
        () => undefined,
        (error: unknown) => {
          if (codeOf(error) === "EEXIST") return undefined
          throw error
        },
      ),
    catch: failedBecause(`the folder ${directory} cannot be created`),
  })
