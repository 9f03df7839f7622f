import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Console, Effect, Either, Exit, Layer } from "effect"
import { visible } from "@petstore/core"
import { StorageCommandFailure } from "../backup/StorageCommandFailure.js"
import { readSetting } from "../settings/read-setting.js"
import { storageSettings } from "../settings/storage.js"
import { storageCommand, StorageTarget } from "./storage-command.js"
import { echoingVisibly, exitFailed } from "./visible-console.js"

// The storage setting alone: the whole table would load the HTTP stack, most of this command's
// start-up, for nothing.
const storage = readSetting(storageSettings.storage, process.env)

/** The store of `PETSTORE_STORAGE`, read as the server reads it; `memory` is refused. */
const target = Layer.effect(
  StorageTarget,
  Effect.gen(function* () {
    const choice = yield* Either.mapLeft(
      storage,
      (problems) => new StorageCommandFailure({ message: problems.join("; ") }),
    )
    if (choice.kind === "memory") {
      return yield* new StorageCommandFailure({
        message:
          "PETSTORE_STORAGE is memory: a server's pets then live in its own memory, where no other process can back them up, restore or freeze them. Set PETSTORE_STORAGE to the server's file: or postgres:// storage.",
      })
    }
    return choice
  }),
)

const run = Command.run(storageCommand, { name: "npm run storage --", version: "1.0.0" })

echoingVisibly(run(process.argv)).pipe(
  Effect.provide(target),
  Effect.catchTag("StorageCommandFailure", (failure) =>
    Effect.zipRight(Console.error(`petstore storage: ${visible(failure.message)}`), exitFailed),
  ),
  // @effect/cli has already shown what was wrong with the command line, and the usage.
  Effect.catchIf(ValidationError.isValidationError, () => exitFailed),
  Effect.provide(NodeContext.layer),
  (main) =>
    NodeRuntime.runMain(main, {
      // Interrupted (Ctrl-C, SIGTERM): the work in hand was rolled back or removed by then.
      teardown: (exit, onExit) => {
        if (Exit.isSuccess(exit)) return onExit(0)
        if (Cause.isInterruptedOnly(exit.cause)) {
          process.stderr.write(
            "petstore storage: interrupted before it finished: nothing was changed, and no partial file was kept.\n",
          )
          return onExit(130)
        }
        onExit(1)
      },
    }),
)
