import { Either } from "effect"

/** What a PostgreSQL URL names, percent-decoded; never its password. */
export interface PostgresUrlParts {
  readonly host: string
  readonly database: string
  readonly user: string
}

const decode = (text: string): Either.Either<string, URIError> =>
  Either.try({
    try: () => decodeURIComponent(text),
    catch: (error) => (error instanceof URIError ? error : new URIError(String(error))),
  })

/**
 * Reads a PostgreSQL URL as the driver will: it percent-decodes the user, password and database,
 * and throws on a malformed escape (`%zz`). The reason given never quotes the text, which may
 * hold a password.
 */
export const readPostgresUrl = (text: string): Either.Either<PostgresUrlParts, string> => {
  if (!URL.canParse(text)) return Either.left("is not a valid PostgreSQL URL")
  const url = new URL(text)
  const parts = Either.all({
    user: decode(url.username),
    password: decode(url.password),
    database: decode(url.pathname.replace(/^\//, "")),
  })
  return Either.match(parts, {
    onLeft: () =>
      Either.left("is not a valid PostgreSQL URL: a % in it does not start a %XX escape"),
    onRight: ({ user, database }) => Either.right({ host: url.host, database, user }),
  })
}
