import { Config, ConfigError, Either } from "effect"
import { parseStorageChoice, type StorageChoice } from "../storage/storage-selection.js"
import { fromEnv, setting } from "./setting.js"
import { positiveDuration } from "./values.js"

/** Read by the module that maps it to an adapter; its refusals name the variable already. */
const storageChoice = (variable: string): Config.Config<StorageChoice> =>
  Config.string(variable).pipe(
    Config.mapOrFail((text) =>
      Either.mapLeft(parseStorageChoice(text), (message) =>
        ConfigError.InvalidData([variable], message),
      ),
    ),
  )

/** Where pets (and stored keys) are kept, and how long an idempotency key is remembered. */
export const storageSettings = {
  storage: setting({
    variable: "PETSTORE_STORAGE",
    fallback: "file:./data/petstore.db",
    description:
      "Where pets are kept: `file:<path>` (an SQLite file), a `postgres://` URL or `memory` (see Storage).",
    read: storageChoice,
  }),
  idempotencyTtl: setting({
    variable: "PETSTORE_IDEMPOTENCY_TTL",
    fallback: "24h",
    description:
      "How long an `Idempotency-Key` is remembered (`s`, `min`, `h` or `d`); expired keys are purged in the background.",
    read: fromEnv(positiveDuration),
  }),
}
