import { parseStorageChoice, type StorageChoice } from "@petstore/storage"
import { Either } from "effect"

export interface ServerConfig {
  readonly host: string
  readonly port: number
  readonly basePath: string
  /** Empty when none is configured: the server then generates one for the run. */
  readonly apiKeys: ReadonlyArray<string>
  readonly storage: StorageChoice
  /** The production base URL the OpenAPI document names (`PETSTORE_PUBLIC_URL`). */
  readonly publicUrl: string
  /** The staging base URL the OpenAPI document names (`PETSTORE_STAGING_URL`). */
  readonly stagingUrl: string
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

/** An absolute http(s) URL whose path ends in the base path; `undefined` when not set. */
const readServerUrl = (
  name: string,
  text: string | undefined,
  basePath: Either.Either<string, string>,
): Either.Either<string | undefined, string> => {
  if (text === undefined || text === "") return Either.right(undefined)
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (
    url === undefined ||
    !/^https?:$/.test(url.protocol) ||
    url.search !== "" ||
    url.hash !== ""
  ) {
    return Either.left(
      `${name} must be an http or https URL such as https://api.example.com/v1; got ${JSON.stringify(text)}`,
    )
  }
  const suffix = Either.getOrElse(basePath, () => "")
  return url.pathname.replace(/\/+$/, "").endsWith(suffix)
    ? Either.right(text.replace(/\/+$/, ""))
    : Either.left(`${name} must end in the base path ${suffix}; got ${JSON.stringify(text)}`)
}

const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** The server's settings from environment variables, or every problem found with them. */
export const readConfig = (
  env: Environment,
): Either.Either<ServerConfig, ReadonlyArray<string>> => {
  const basePath = readBasePath(env["PETSTORE_BASE_PATH"])
  const settings = {
    port: readPort(env["PORT"]),
    basePath,
    apiKeys: readApiKeys(env["PETSTORE_API_KEYS"]),
    publicUrl: readServerUrl("PETSTORE_PUBLIC_URL", env["PETSTORE_PUBLIC_URL"], basePath),
    stagingUrl: readServerUrl("PETSTORE_STAGING_URL", env["PETSTORE_STAGING_URL"], basePath),
    storage: parseStorageChoice(env["PETSTORE_STORAGE"] || "file:./data/petstore.db"),
  }
  const problems = Object.values(settings).flatMap((setting: Either.Either<unknown, string>) =>
    Either.isLeft(setting) ? [setting.left] : [],
  )
  return Either.mapBoth(Either.all(settings), {
    onLeft: () => problems,
    onRight: ({ publicUrl, stagingUrl, ...valid }) => {
      const host = env["HOST"] || "127.0.0.1"
      const production = publicUrl ?? `http://${urlHost(host)}:${valid.port}${valid.basePath}`
      return { host, ...valid, publicUrl: production, stagingUrl: stagingUrl ?? production }
    },
  })
}
