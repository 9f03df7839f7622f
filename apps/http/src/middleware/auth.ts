import { hash, timingSafeEqual } from "node:crypto"
import type { Middleware, ParameterizedContext } from "koa"
import { apiError, respondWithError } from "../api-error.js"
import { domainErrorResponse } from "../api/domain-errors.js"
import { bearerTokenPattern } from "../config.js"
import { looksLikeStoredKey } from "../keys/api-key-format.js"
import type { StoredKeys } from "../keys/StoredKeys.js"

/** Who made an authenticated request: the key they presented, by an id that is not the key. */
export interface Principal {
  /**
   * For a key of `PETSTORE_API_KEYS`, `env:` and the first 16 hex digits of the key's SHA-256;
   * for a stored key, its id (`key_…`, as `npm run keys -- list` shows it). Stable across
   * restarts and processes.
   */
  readonly keyId: string
}

export interface AuthState {
  principal?: Principal
}

const realm = 'Bearer realm="petstore"'

/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces, then a b64token, then nothing. */
const bearerCredentials = /^Bearer +(\S+) *$/i

const digest = (text: string) => hash("sha256", text, "buffer")

/**
 * Finds which key `presented` is. Every key is compared, each through a SHA-256 digest of equal
 * length, so the time taken says nothing about how much of a key was right or which one matched.
 */
const keyMatcher = (keys: ReadonlyArray<string>) => {
  const known = keys.map((key) => {
    const keyDigest = digest(key)
    return { digest: keyDigest, principal: { keyId: `env:${keyDigest.toString("hex", 0, 8)}` } }
  })
  const compare = (presented: string): Principal | undefined => {
    const candidate = digest(presented)
    let match: Principal | undefined
    for (const key of known) {
      if (timingSafeEqual(key.digest, candidate) && match === undefined) match = key.principal
    }
    return match
  }
  // A key once admitted is known by its exact text; only admitted keys are kept, so a client
  // cannot fill this, and unknown tokens always take the constant-time path.
  const admitted = new Map<string, Principal>()
  return (presented: string): Principal | undefined => {
    const remembered = admitted.get(presented)
    if (remembered !== undefined) return remembered
    const principal = compare(presented)
    if (principal !== undefined && admitted.size < 1_000) admitted.set(presented, principal)
    return principal
  }
}

const authorization = "authorization"

const authorizationHeaderCount = (rawHeaders: ReadonlyArray<string>) => {
  let count = 0
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index]
    // Only a name of the right length is lower-cased (an allocation) to be compared.
    if (name?.length === authorization.length && name.toLowerCase() === authorization) count += 1
  }
  return count
}

const refuseInvalidKey = (ctx: ParameterizedContext<AuthState>) => {
  ctx.set("WWW-Authenticate", `${realm}, error="invalid_token"`)
  respondWithError(ctx, apiError("unauthorized", "the API key is not valid"))
}

/**
 * Admits only requests bearing one of `keys` (any b64token; compared in constant time) or a key
 * of `storedKeys` (a `pst_` key, looked up by its hash) as `Authorization: Bearer <key>`; every
 * other request gets 401 and the `WWW-Authenticate` challenge, before any other part of the
 * request is looked at. When the store cannot say whether a key is stored, 503 with `Retry-After`.
 */
export const bearerAuth = (
  keys: ReadonlyArray<string>,
  storedKeys?: StoredKeys["Type"],
): Middleware<AuthState> => {
  if (keys.length === 0 && storedKeys === undefined) {
    throw new Error("bearerAuth needs at least one API key or a key store")
  }
  const matchKey = keyMatcher(keys)
  return async (ctx, next) => {
    // Node keeps the first of several Authorization headers; a proxy may keep the last. Two
    // credentials are refused rather than one of them chosen.
    if (authorizationHeaderCount(ctx.req.rawHeaders) > 1) {
      ctx.set("WWW-Authenticate", realm)
      respondWithError(ctx, apiError("unauthorized", "send one Authorization header, not several"))
      return
    }
    const header = ctx.get("Authorization")
    const token = bearerCredentials.exec(header)?.[1]
    if (token === undefined || !bearerTokenPattern.test(token)) {
      ctx.set("WWW-Authenticate", realm)
      respondWithError(
        ctx,
        apiError(
          "unauthorized",
          header === ""
            ? "an API key is required: send it as Authorization: Bearer <key>"
            : "the Authorization header must have the form Bearer <key>",
        ),
      )
      return
    }
    let principal = matchKey(token)
    if (principal === undefined && storedKeys !== undefined && looksLikeStoredKey(token)) {
      const verdict = await storedKeys.identify(token)
      if (verdict.kind === "unavailable") {
        const { error, headers } = domainErrorResponse(verdict.error)
        ctx.set(headers)
        respondWithError(ctx, error)
        return
      }
      if (verdict.kind === "admitted") principal = { keyId: verdict.keyId }
    }
    if (principal === undefined) return refuseInvalidKey(ctx)
    ctx.state.principal = principal
    // What a key reads is the key holder's: no cache on the way may keep it, errors included.
    ctx.set("Cache-Control", "no-store")
    await next()
  }
}
