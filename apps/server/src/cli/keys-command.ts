import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { Console, Data, Effect, Option, Redacted } from "effect"
import { ApiKeyLabel, ApiKeyStore, issueApiKey, visible, type ApiKeyRecord } from "@petstore/core"

/** A failure of a `keys` command, as one sentence for the person who ran it. */
export class KeysCommandFailure extends Data.TaggedError("KeysCommandFailure")<{
  readonly message: string
}> {}

const time = (millis: number) => new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z")

/** The keys as a table: id, label (both `visible`), created, last used; never a key or a hash. */
export const keysTable = (records: ReadonlyArray<ApiKeyRecord>): string => {
  const rows = [
    ["ID", "LABEL", "CREATED", "LAST USED"],
    ...records.map((record) => [
      visible(record.id),
      visible(record.label),
      time(record.createdAt),
      Option.match(record.lastUsedAt, { onNone: () => "never", onSome: time }),
    ]),
  ]
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => [...(row[column] ?? "")].length)),
  )
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths?.[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
}

const create = Command.make(
  "create",
  {
    label: Options.text("label").pipe(
      Options.withSchema(ApiKeyLabel),
      Options.withDescription(
        "What the key is for, as `list` shows it: one line of 1 to 100 characters, with no control or bidirectional formatting characters.",
      ),
    ),
  },
  ({ label }) =>
    Effect.gen(function* () {
      const { key, record } = yield* issueApiKey(label)
      // The key alone on the last line, so a script can take it with `tail -n 1`.
      yield* Console.log(
        `Created API key ${visible(record.id)} (${visible(JSON.stringify(record.label))}). Only its hash is stored, so it is shown this once:\n${Redacted.value(key)}`,
      )
    }),
).pipe(Command.withDescription("Create a key, store its hash, and print the key once."))

const list = Command.make("list", {}, () =>
  Effect.gen(function* () {
    const records = yield* Effect.flatMap(ApiKeyStore, (store) => store.list)
    yield* Console.log(records.length === 0 ? "No API key is stored." : keysTable(records))
  }),
).pipe(Command.withDescription("List the stored keys: id, label, created, last used."))

const revoke = Command.make(
  "revoke",
  { id: Args.text({ name: "id" }).pipe(Args.withDescription("The key's id, as `list` shows it.")) },
  ({ id }) =>
    Effect.gen(function* () {
      yield* Effect.flatMap(ApiKeyStore, (store) => store.revoke(id)).pipe(
        Effect.catchTag("ApiKeyNotFound", () =>
          Effect.fail(
            new KeysCommandFailure({
              message: `no stored API key has the id ${JSON.stringify(id)}; \`npm run keys -- list\` shows the ids`,
            }),
          ),
        ),
      )
      yield* Console.log(
        `Revoked API key ${visible(id)}: every server refuses it within 2 seconds.`,
      )
    }),
).pipe(Command.withDescription("Revoke a key: it stops working on every server within 2 seconds."))

/** `keys create | list | revoke`, on the `ApiKeyStore` it is given. */
export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Manage the API keys kept in PETSTORE_STORAGE."),
  Command.withSubcommands([create, list, revoke]),
)
