import path from "node:path"
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { migrate, StoreFreeze } from "@petstore/storage/sql"
import { Console, Context, Effect, Option } from "effect"
import { progressFor } from "../backup/progress.js"
import { restoreBackup } from "../backup/restore-backup.js"
import { failedBecause } from "../backup/StorageCommandFailure.js"
import { openExistingStore, type DurableStorage } from "../backup/store-clients.js"
import { takeBackup, type CopySummary } from "../backup/take-backup.js"
import { describeStorageChoice } from "../storage/storage-selection.js"

/** The store named by `PETSTORE_STORAGE`, read as the server reads it. */
export class StorageTarget extends Context.Tag("@petstore/server/StorageTarget")<
  StorageTarget,
  DurableStorage
>() {}

const time = (millis: number) => new Date(millis).toISOString()

/** The summary line: what was copied, its size and how long it took. */
export const summaryLine = (verb: string, from: string, to: string, summary: CopySummary) => {
  const { counts, lastPetId, sourceFrozenAt } = summary.metadata
  const frozen = Option.match(sourceFrozenAt, {
    onNone: () => "",
    onSome: (at) => `; the source was frozen (since ${at})`,
  })
  return `${verb} ${from} to ${to}: ${counts.pets} pets, ${counts.api_keys} API keys, ${counts.idempotency_keys} idempotency records, ${summary.bytes} bytes, ${summary.seconds.toFixed(2)} s; new ids continue above ${lastPetId}${frozen}`
}

const file = (description: string) =>
  Args.text({ name: "file" }).pipe(Args.withDescription(description))

const backup = Command.make(
  "backup",
  { file: file("The backup to write: a new file (an existing one is refused).") },
  ({ file }) =>
    Effect.gen(function* () {
      const target = yield* StorageTarget
      const progress = progressFor("backup")
      const summary = yield* Effect.ensuring(takeBackup(target, file, progress), progress.finish)
      yield* Console.log(
        summaryLine("backed up", describeStorageChoice(target), path.resolve(file), summary),
      )
    }),
).pipe(
  Command.withDescription(
    "Write a consistent snapshot of the whole store into a new SQLite file, while servers serve.",
  ),
)

const restore = Command.make(
  "restore",
  {
    file: file("The backup to restore, as `backup` wrote it."),
    replace: Options.boolean("replace").pipe(
      Options.withDescription(
        "Replace whatever the store holds; without it, a store holding any data is refused.",
      ),
    ),
  },
  ({ file, replace }) =>
    Effect.gen(function* () {
      const target = yield* StorageTarget
      const progress = progressFor("restore")
      const summary = yield* Effect.ensuring(
        restoreBackup(target, file, { replace }, progress),
        progress.finish,
      )
      yield* Console.log(
        summaryLine("restored", path.resolve(file), describeStorageChoice(target), summary),
      )
    }),
).pipe(
  Command.withDescription(
    "Load a backup into a new or empty store (or any store, with --replace), all or nothing.",
  ),
)

/** Runs `effect` on the store, migrated as a server would migrate it. */
const onMigratedStore = <A>(
  effect: Effect.Effect<A, SqlError, SqlClient.SqlClient>,
  what: string,
) =>
  Effect.gen(function* () {
    const target = yield* StorageTarget
    const description = describeStorageChoice(target)
    const sql = yield* openExistingStore(target)
    const result = yield* Effect.zipRight(migrate, effect).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.catchTags({
        SqlError: (error) => Effect.fail(failedBecause(`${what} ${description} failed`)(error)),
        MigrationError: (error) =>
          Effect.fail(failedBecause(`${what} ${description} failed`)(error)),
      }),
    )
    return { description, result }
  }).pipe(Effect.scoped)

const freeze = Command.make("freeze", {}, () =>
  Effect.gen(function* () {
    const { description, result } = yield* onMigratedStore(StoreFreeze.freeze, "freezing")
    yield* Console.log(
      result.already
        ? `${description} has been frozen since ${time(result.frozenAt)}: it still refuses creates and key changes, and serves reads.`
        : `froze ${description}: every server on it now answers creates, and key changes, with 503 storage_unavailable and serves reads, until \`npm run storage -- thaw\`.`,
    )
  }),
).pipe(
  Command.withDescription(
    "Stop the store taking writes: every server on it answers creates with 503 and keeps serving reads.",
  ),
)

const thaw = Command.make("thaw", {}, () =>
  Effect.gen(function* () {
    const { description, result } = yield* onMigratedStore(StoreFreeze.thaw, "thawing")
    yield* Console.log(
      Option.match(result, {
        onNone: () => `${description} was not frozen: nothing changed.`,
        onSome: (since) =>
          `thawed ${description} (frozen since ${time(since)}): every server on it takes creates again.`,
      }),
    )
  }),
).pipe(Command.withDescription("End a freeze: the store takes writes again."))

/** `storage backup | restore | freeze | thaw`, on the store `StorageTarget` names. */
export const storageCommand = Command.make("storage").pipe(
  Command.withDescription("Back up, restore, freeze and thaw the store named by PETSTORE_STORAGE."),
  Command.withSubcommands([backup, restore, freeze, thaw]),
)
