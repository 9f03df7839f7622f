import { apiError, type ApiError } from "../vocabulary/api-error.js"

/** The part of a Koa context that holds the request target, and parses it when `path` is read. */
interface Targeted {
  readonly url: string
  readonly path: string
}

const withFragment = apiError(
  "bad_request",
  "the request target has a fragment (#): send the path and query only",
)
const unparsable = apiError("bad_request", "the request target is not a valid path")

/**
 * Why the request target cannot be routed, if it cannot. A target has no fragment (RFC 9112
 * §3.2), yet Node's parser lets one through, and where a proxy in front ends the path at `#`
 * (or does not) is its own choice: refused, as no client sends one. A target Koa cannot parse
 * would throw again in the router and in every message that names the path: read once here, it
 * is a 400. (Koa parses a target that does not start with `/`, or holds `#`, with Node's legacy
 * `url.parse`, which throws a `URIError` for a malformed percent-escape in what it takes for a
 * user name: `http://%@host/`, `//%@host/#`.)
 */
export const targetFault = (ctx: Targeted): ApiError | undefined => {
  if (ctx.url.includes("#")) return withFragment
  try {
    void ctx.path
    return undefined
  } catch {
    return unparsable
  }
}
