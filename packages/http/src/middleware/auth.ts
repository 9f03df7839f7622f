import { hash, timingSafeEqual } from "node:crypto"
import type { ParameterizedContext } from "koa"
import { apiError, respondWithError } from "../vocabulary/api-error.js"
import { bearerTokenPattern } from "../vocabulary/headers.js"
import { looksLikeStoredKey } from "@petstore/core"
import type { StoredKeyQuestion, StoredKeys } from "../keys/StoredKeys.js"
import type { Principal } from "../vocabulary/request-state.js"

/** What a request's `Authorization` header says, as far as it can be told without I/O. */
export type Credentials =
  /** No `Authorization` header: nothing was guessed. */
  | { readonly kind: "missing" }
  /** Present, but not one `Bearer <b64token>`. */
  | { readonly kind: "malformed"; readonly reason: string }
  | { readonly kind: "admitted"; readonly principal: Principal }
  /** A well-formed token that is no key, known without asking the store. */
  | { readonly kind: "wrong" }
  /** A stored key's shape: only the store can say. */
  | StoredKeyQuestion

const realm = 'Bearer realm="petstore"'

/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces, then a b64token, then nothing. */
const bearerCredentials = /^Bearer +(\S+) *$/i

const digest = (text: string) => hash("sha256", text, "buffer")

/**
 * Finds which of `keys` `presented` is. Every key is compared, each through a SHA-256 digest of
 * equal length, so the time taken says nothing about how much of a key was right or which one
 * matched. A key is named by its position, which no dictionary can turn back into it.
 */
const keyMatcher = (keys: ReadonlyArray<string>) => {
  const known = keys.map((key, index) => ({
    digest: digest(key),
    principal: { keyId: `env:${index + 1}` },
  }))
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

/** Reads a request's credentials; see `Credentials`. */
export type CredentialsReader = (ctx: ParameterizedContext) => Credentials

/**
 * Accepts one of `keys` (any b64token; compared in constant time) or a key of `storedKeys` (a
 * `pst_` key, known by its hash) as `Authorization: Bearer <key>`.
 */
export const credentialsReader = (
  keys: ReadonlyArray<string>,
  storedKeys?: StoredKeys["Type"],
): CredentialsReader => {
  if (keys.length === 0 && storedKeys === undefined) {
    throw new Error("the key check needs at least one API key or a key store")
  }
  const matchKey = keyMatcher(keys)
  return (ctx) => {
    // Node keeps the first of several Authorization headers; a proxy may keep the last. Two
    // credentials are refused rather than one of them chosen.
    if (authorizationHeaderCount(ctx.req.rawHeaders) > 1) {
      return { kind: "malformed", reason: "send one Authorization header, not several" }
    }
    const header = ctx.get("Authorization")
    if (header === "") return { kind: "missing" }
    const token = bearerCredentials.exec(header)?.[1]
    if (token === undefined || !bearerTokenPattern.test(token)) {
      return {
        kind: "malformed",
        reason: "the Authorization header must have the form Bearer <key>",
      }
    }
    const principal = matchKey(token)
    if (principal !== undefined) return { kind: "admitted", principal }
    if (storedKeys === undefined || !looksLikeStoredKey(token)) return { kind: "wrong" }
    const checked = storedKeys.check(token)
    switch (checked.kind) {
      case "admitted":
        return { kind: "admitted", principal: { keyId: checked.keyId } }
      case "unknown":
        return { kind: "wrong" }
      case "ask":
        return checked
    }
  }
}

/** 401 with the `WWW-Authenticate` challenge (RFC 6750 §3): no key, or a key that is not one. */
export const refuseCredentials = (
  ctx: ParameterizedContext,
  credentials: Exclude<Credentials, { readonly kind: "admitted" | "ask" }>,
): void => {
  switch (credentials.kind) {
    case "missing":
      ctx.set("WWW-Authenticate", realm)
      return respondWithError(
        ctx,
        apiError("unauthorized", "an API key is required: send it as Authorization: Bearer <key>"),
      )
    case "malformed":
      ctx.set("WWW-Authenticate", realm)
      return respondWithError(ctx, apiError("unauthorized", credentials.reason))
    case "wrong":
      ctx.set("WWW-Authenticate", `${realm}, error="invalid_token"`)
      return respondWithError(ctx, apiError("unauthorized", "the API key is not valid"))
  }
}
