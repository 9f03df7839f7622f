import { createHash, timingSafeEqual } from "node:crypto"
import type { Middleware } from "koa"
import { apiError, respondWithError } from "../api-error.js"

/** Who made an authenticated request: which configured key they presented. */
export interface Principal {
  readonly keyIndex: number
}

export interface AuthState {
  principal?: Principal
}

const realm = 'Bearer realm="petstore"'

/** RFC 6750 §2.1: `Bearer` (any case), one or more spaces, then a b64token. */
const bearerCredentials = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

/**
 * Finds which key `presented` is. Every key is compared, each through a SHA-256 digest of equal
 * length, so the time taken says nothing about how much of a key was right or which one matched.
 */
const keyMatcher = (keys: ReadonlyArray<string>) => {
  const digests = keys.map(digest)
  return (presented: string): number => {
    const candidate = digest(presented)
    let match = -1
    digests.forEach((key, index) => {
      if (timingSafeEqual(key, candidate) && match === -1) match = index
    })
    return match
  }
}

/**
 * Admits only requests bearing one of `keys` as `Authorization: Bearer <key>`; every other
 * request gets 401 and the `WWW-Authenticate` challenge, before any other part of the request
 * is looked at.
 */
export const bearerAuth = (keys: ReadonlyArray<string>): Middleware<AuthState> => {
  if (keys.length === 0) throw new Error("bearerAuth needs at least one API key")
  const matchKey = keyMatcher(keys)
  return async (ctx, next) => {
    const header = ctx.get("Authorization")
    const token = bearerCredentials.exec(header)?.[1]
    if (token === undefined) {
      ctx.set("WWW-Authenticate", realm)
      respondWithError(
        ctx,
        apiError(
          401,
          "unauthorized",
          header === ""
            ? "an API key is required: send it as Authorization: Bearer <key>"
            : "the Authorization header must have the form Bearer <key>",
        ),
      )
      return
    }
    const keyIndex = matchKey(token)
    if (keyIndex === -1) {
      ctx.set("WWW-Authenticate", `${realm}, error="invalid_token"`)
      respondWithError(ctx, apiError(401, "unauthorized", "the API key is not valid"))
      return
    }
    ctx.state.principal = { keyIndex }
    await next()
  }
}
