import { Config, ConfigError, Either, Option, Schema } from "effect"
import {
  anyPeerIsProxy,
  noTrustedProxy,
  trustedProxies,
  type CorsOrigins,
  type TrustedProxies,
} from "@petstore/http"
import { shownValue } from "../shown-value.js"
import {
  everyRefusal,
  fromEnv,
  fromSchema,
  optionalSetting,
  quoted,
  setting,
  type Reading,
} from "./setting.js"
import { entriesOf, port, UrlText } from "./values.js"

/** `/` (the root, read as "") or segments such as `/api/v1`, without the trailing slash. */
const basePath: Reading<string> = fromSchema(
  Schema.String.pipe(
    Schema.pattern(/^\/$|^(\/[A-Za-z0-9\-._~]+)+\/*$/),
    Schema.transform(Schema.String, {
      strict: true,
      decode: (path) => path.replace(/\/+$/, ""),
      encode: (path) => (path === "" ? "/" : path),
    }),
  ),
  "a path such as /v1",
)

/**
 * An absolute http(s) URL without user, password, query or fragment (the OpenAPI document
 * publishes it), without its trailing slash.
 */
const serverUrl: Reading<string> = fromSchema(
  UrlText(
    (url) =>
      /^https?:$/.test(url.protocol) &&
      url.username === "" &&
      url.password === "" &&
      url.search === "" &&
      url.hash === "",
  ).pipe(
    Schema.transform(Schema.String, {
      strict: true,
      decode: (text) => text.replace(/\/+$/, ""),
      encode: (text) => text,
    }),
  ),
  "an http or https URL without user, password, query or fragment, such as https://api.example.com/v1",
  shownValue,
)

/** An origin as browsers send it: scheme, host and port (when not the default), nothing else. */
const origin = (text: string): Either.Either<string, string> => {
  if (text === "*") return Either.left("* allows every origin and cannot be listed with others")
  // WHATWG URLs take `*` in a host, so `https://*.example.com` parses as an origin that no
  // browser ever sends: the operator meant a pattern, and would get CORS for nobody.
  if (text.includes("*")) {
    return Either.left(
      `${JSON.stringify(text)} is a pattern: wildcards and patterns are not supported, list each origin (https://app.example.com,https://admin.example.com) or give * alone for any`,
    )
  }
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined &&
    /^https?:$/.test(url.protocol) &&
    text.replace(/\/$/, "").toLowerCase() === url.origin.toLowerCase()
    ? Either.right(url.origin)
    : Either.left(`${JSON.stringify(text)} is not an origin (scheme, host and port only)`)
}

/** By hand: no schema says "an origin", and a refusal names the entry at fault, not the list. */
const corsOrigins: Reading<CorsOrigins> = {
  rule: "* alone, or comma-separated origins such as https://app.example.com",
  quote: quoted,
  read: (text) => {
    const entries = entriesOf(text)
    return entries.length === 1 && entries[0] === "*"
      ? Either.right("*")
      : Either.all(entries.map(origin))
  },
}

/**
 * `false`, `true` (the socket's peer, whoever it is), or the proxies by address, CIDR range or
 * `proxy-addr`'s names. By hand: `proxy-addr` is the parser, and its error names the bad entry.
 */
const trustProxy: Reading<TrustedProxies> = {
  rule: "false, true, or the proxies' addresses and CIDR ranges, comma-separated (10.0.0.7, 10.0.0.0/8, loopback)",
  quote: quoted,
  read: (text) => {
    const value = text.trim().toLowerCase()
    if (value === "false") return Either.right(noTrustedProxy)
    if (value === "true") return Either.right(anyPeerIsProxy)
    return Either.try({
      try: () => trustedProxies(entriesOf(value)),
      catch: (error) => (error instanceof Error ? error.message : String(error)),
    })
  },
}

/** Where the API listens, is mounted and is published, and which browsers and proxies it trusts. */
export const networkSettings = {
  port: setting({
    variable: "PORT",
    fallback: "8080",
    description: "TCP port (0 picks a free one; the start-up log says which).",
    read: fromEnv(port),
  }),
  host: setting({
    variable: "HOST",
    fallback: "127.0.0.1",
    description: "Interface to listen on (`0.0.0.0` for all).",
    read: Config.string,
  }),
  basePath: setting({
    variable: "PETSTORE_BASE_PATH",
    fallback: "/v1",
    description: "Where the versioned API is mounted (`/` for the root).",
    read: fromEnv(basePath),
  }),
  publicUrl: optionalSetting({
    variable: "PETSTORE_PUBLIC_URL",
    whenUnset: "the document names the server it was fetched from",
    description:
      "The production base URL the OpenAPI document names in `servers`, ending in the base path (`https://api.example.com/v1`).",
    read: fromEnv(serverUrl),
  }),
  stagingUrl: optionalSetting({
    variable: "PETSTORE_STAGING_URL",
    whenUnset: "no staging server is named",
    description:
      "A staging base URL the OpenAPI document names after production (or after this server, when `PETSTORE_PUBLIC_URL` is unset), ending in the base path.",
    read: fromEnv(serverUrl),
  }),
  corsOrigins: optionalSetting({
    variable: "PETSTORE_CORS_ORIGINS",
    whenUnset: "no CORS: browsers on other origins cannot read answers",
    description:
      "Comma-separated origins (`https://app.example.com`) whose browser scripts may call the API, or `*` for any.",
    read: fromEnv(corsOrigins),
  }),
  trustProxy: setting({
    variable: "PETSTORE_TRUST_PROXY",
    fallback: "false",
    description:
      "The proxies whose `X-Forwarded-For` entries name the client: comma-separated addresses and CIDR ranges (`10.0.0.7,10.0.0.0/8`; `loopback`, `linklocal`, `uniquelocal`), `false` (none: the socket's peer is the client) or `true` (whatever peer connects; only where clients cannot reach the server but through the proxy).",
    read: fromEnv(trustProxy),
  }),
}

const { basePath: base, publicUrl, stagingUrl } = networkSettings

/** A server URL, when set, must end in the base path: it is where the versioned API is. */
const inBasePath = (
  variable: string,
  url: Option.Option<string>,
  path: string,
): Either.Either<unknown, ConfigError.ConfigError> =>
  Option.isNone(url) || new URL(url.value).pathname.replace(/\/+$/, "").endsWith(path)
    ? Either.right(url)
    : Either.left(
        ConfigError.InvalidData(
          [variable],
          `${variable} must end in the base path ${path}; got ${JSON.stringify(url.value)}`,
        ),
      )

/** The base path and the server URLs, each URL checked against the path. */
export const serverUrls = Config.all({
  basePath: base.config,
  publicUrl: publicUrl.config,
  stagingUrl: stagingUrl.config,
}).pipe(
  Config.mapOrFail((urls) => {
    const checks = {
      publicUrl: inBasePath(publicUrl.variable, urls.publicUrl, urls.basePath),
      stagingUrl: inBasePath(stagingUrl.variable, urls.stagingUrl, urls.basePath),
    }
    return Either.all(checks).pipe(
      Either.map(() => urls),
      Either.mapLeft(everyRefusal(checks)),
    )
  }),
)
