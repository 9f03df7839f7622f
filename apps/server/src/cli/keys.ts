import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type { StorageUnavailable } from "@petstore/core"
import { apiKeyStoreLayer } from "../storage/api-key-store-selection.js"
import { explainStorageFailure } from "../storage/explain-storage-failure.js"
import type { StorageChoice } from "../storage/storage-selection.js"
import { Cause, Console, Effect, Either, Layer } from "effect"
import { readSetting } from "../settings/read-setting.js"
import { storageSettings } from "../settings/storage.js"
import { visible } from "@petstore/core"
import { keysCommand, KeysCommandFailure } from "./keys-command.js"
import { echoingVisibly, exitFailed } from "./visible-console.js"

const storage = readSetting(storageSettings.storage, process.env)

const explained = (choice: StorageChoice) => (error: StorageUnavailable) =>
  new KeysCommandFailure({ message: explainStorageFailure(choice, Cause.fail(error)) })

/** The key store of `PETSTORE_STORAGE`, read as the server reads it; opened only when a command needs it. */
const keyStore = Layer.unwrapEffect(
  Effect.gen(function* () {
    const choice = yield* Either.mapLeft(
      storage,
      (problems) => new KeysCommandFailure({ message: problems.join("; ") }),
    )
    if (choice.kind === "memory") {
      return yield* new KeysCommandFailure({
        message:
          "PETSTORE_STORAGE is memory, so there is no store to share with a running server. Set PETSTORE_STORAGE to the server's file: or postgres:// storage, or give the server keys with PETSTORE_API_KEYS.",
      })
    }
    return Layer.mapError(apiKeyStoreLayer(choice), explained(choice))
  }),
)

const run = Command.run(keysCommand, { name: "npm run keys --", version: "1.0.0" })

echoingVisibly(run(process.argv)).pipe(
  Effect.catchTag("StorageUnavailable", (error) =>
    Either.match(storage, {
      onLeft: () => Effect.fail(new KeysCommandFailure({ message: "storage is unavailable" })),
      onRight: (choice) => Effect.fail(explained(choice)(error)),
    }),
  ),
  Effect.provide(keyStore),
  Effect.catchTag("KeysCommandFailure", (failure) =>
    Effect.zipRight(Console.error(`petstore keys: ${visible(failure.message)}`), exitFailed),
  ),
  // @effect/cli has already shown what was wrong with the command line, and the usage.
  Effect.catchIf(ValidationError.isValidationError, () => exitFailed),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain,
)
