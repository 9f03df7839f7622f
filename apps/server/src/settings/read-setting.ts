import { ConfigError, ConfigProvider, Effect, Either } from "effect"
import type { Setting } from "./setting.js"

export type Environment = Readonly<Record<string, string | undefined>>

/** Every problem a `ConfigError` holds, one message each. */
export const messagesOf = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...messagesOf(error.left), ...messagesOf(error.right)]
    case "InvalidData":
      return [error.message]
    default:
      return [`${error.path.join(".")}: ${error.message}`]
  }
}

/** An empty variable counts as unset, as shells make it easy to set one to nothing. */
export const providerOf = (env: Environment): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(
    new Map(
      Object.entries(env).flatMap(([name, value]): Array<[string, string]> =>
        value === undefined || value === "" ? [] : [[name, value]],
      ),
    ),
  )

/** One setting read as the server reads it (for tools that share the server's environment). */
export const readSetting = <A>(
  setting: Setting<A>,
  env: Environment,
): Either.Either<A, ReadonlyArray<string>> =>
  providerOf(env)
    .load(setting.config)
    .pipe(Effect.either, Effect.runSync, Either.mapLeft(messagesOf))
