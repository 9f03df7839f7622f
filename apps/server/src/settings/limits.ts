import { Schema } from "effect"
import { defaultConnectionLimits } from "@petstore/http/node"
import { shownValue } from "../shown-value.js"
import { fromEnv, fromSchema, optionalSetting, orOff, setting, type Reading } from "./setting.js"
import { positiveInteger, rate, UrlText } from "./values.js"

const redisUrl: Reading<string> = fromSchema(
  UrlText((url) => /^rediss?:$/.test(url.protocol) && url.hostname !== ""),
  "a redis:// or rediss:// URL such as redis://127.0.0.1:6379",
  shownValue,
)

const maxRedisPrefixLength = 64

/**
 * Printable ASCII without spaces: a prefix an operator can type as it is into `redis-cli` or a
 * `SCAN` pattern.
 */
const redisPrefix: Reading<string> = fromSchema(
  Schema.String.pipe(
    Schema.filter((text) => text.length <= maxRedisPrefixLength || `got ${text.length} characters`),
    Schema.pattern(/^[\x21-\x7e]+$/),
  ),
  `1 to ${maxRedisPrefixLength} printable ASCII characters without spaces, such as petstore:limit:`,
)

/** The abuse limits, where they are kept, and the connections the server accepts. */
export const limitSettings = {
  rateLimit: setting({
    variable: "PETSTORE_RATE_LIMIT",
    fallback: "1000/s",
    description:
      "Requests per API key: `<n>/<s|min|h>` (a bucket of n refilled evenly over the window; over it, 429 with `Retry-After`) or `off`. Per process, or shared through `PETSTORE_REDIS_URL`.",
    read: fromEnv(orOff(rate)),
  }),
  authFailureLimit: setting({
    variable: "PETSTORE_AUTH_FAILURE_LIMIT",
    fallback: "20/min",
    description:
      "Wrong keys (well-formed tokens that are no key; a missing or malformed `Authorization` is always 401) per client address before they get 429 instead of 401, without a store look-up; a valid key is never refused for it (same syntax as `PETSTORE_RATE_LIMIT`, or `off`). Per process, or shared through `PETSTORE_REDIS_URL`.",
    read: fromEnv(orOff(rate)),
  }),
  redisUrl: optionalSetting({
    variable: "PETSTORE_REDIS_URL",
    whenUnset: "each process keeps its own limits",
    description:
      "A `redis://` URL: the per-key limit and the wrong-key budgets are then shared by every process that names the same Redis (see Abuse limits).",
    read: fromEnv(redisUrl),
  }),
  redisPrefix: setting({
    variable: "PETSTORE_REDIS_PREFIX",
    fallback: "petstore:limit:",
    description: `What every key the limits keep in \`PETSTORE_REDIS_URL\` begins with: deployments sharing one Redis keep their buckets apart by giving each its own (up to ${maxRedisPrefixLength} printable ASCII characters, no spaces).`,
    read: fromEnv(redisPrefix),
  }),
  maxConnections: setting({
    variable: "PETSTORE_MAX_CONNECTIONS",
    fallback: String(defaultConnectionLimits.maxConnections),
    description: "Connections open at once; more are refused when accepted.",
    read: fromEnv(positiveInteger),
  }),
  maxConnectionsPerAddress: setting({
    variable: "PETSTORE_MAX_CONNECTIONS_PER_ADDRESS",
    fallback: String(defaultConnectionLimits.maxConnectionsPerAddress ?? "off"),
    description:
      "Connections open at once from one client address (an IPv6 address counts by its /64; the proxies `PETSTORE_TRUST_PROXY` names are exempt, none with `true`); more are refused when accepted. A positive integer or `off`.",
    read: fromEnv(orOff(positiveInteger)),
  }),
}
