import { parseStorageChoice, type StorageChoice } from "@petstore/storage"
import { Either } from "effect"

export interface ServerConfig {
  readonly host: string
  readonly port: number
  readonly basePath: string
  /** Empty when none is configured: the server then generates one for the run. */
  readonly apiKeys: ReadonlyArray<string>
  readonly storage: StorageChoice
}

type Environment = Readonly<Record<string, string | undefined>>

/** An API key must be sendable as an RFC 6750 bearer token. */
const b64token = /^[A-Za-z0-9\-._~+/]+=*$/
const pathSegments = /^(\/[A-Za-z0-9\-._~]+)+$/

const readPort = (text: string | undefined): Either.Either<number, string> => {
  if (text === undefined || text === "") return Either.right(8080)
  const port = Number(text)
  return /^[0-9]+$/.test(text) && port <= 65535
    ? Either.right(port)
    : Either.left(`PORT must be an integer from 0 to 65535; got ${JSON.stringify(text)}`)
}

const readBasePath = (text: string | undefined): Either.Either<string, string> => {
  if (text === undefined || text === "") return Either.right("/v1")
  if (text === "/") return Either.right("")
  const trimmed = text.replace(/\/+$/, "")
  return pathSegments.test(trimmed)
    ? Either.right(trimmed)
    : Either.left(`PETSTORE_BASE_PATH must be a path such as /v1; got ${JSON.stringify(text)}`)
}

const readApiKeys = (text: string | undefined): Either.Either<ReadonlyArray<string>, string> => {
  const keys = (text ?? "")
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "")
  const unusable = keys.findIndex((key) => !b64token.test(key))
  return unusable === -1
    ? Either.right(keys)
    : Either.left(
        `PETSTORE_API_KEYS: key ${unusable + 1} has characters a bearer token cannot carry (use letters, digits and - . _ ~ + /)`,
      )
}

/** The server's settings from environment variables, or every problem found with them. */
export const readConfig = (
  env: Environment,
): Either.Either<ServerConfig, ReadonlyArray<string>> => {
  const settings = {
    port: readPort(env["PORT"]),
    basePath: readBasePath(env["PETSTORE_BASE_PATH"]),
    apiKeys: readApiKeys(env["PETSTORE_API_KEYS"]),
    storage: parseStorageChoice(env["PETSTORE_STORAGE"] || "memory"),
  }
  const problems = Object.values(settings).flatMap((setting: Either.Either<unknown, string>) =>
    Either.isLeft(setting) ? [setting.left] : [],
  )
  return Either.mapBoth(Either.all(settings), {
    onLeft: () => problems,
    onRight: (valid) => ({ host: env["HOST"] || "127.0.0.1", ...valid }),
  })
}
