import koaCors from "@koa/cors"
import type { Middleware } from "koa"

/** The origins whose browsers may call the API: exact origins, or `"*"` for any. */
export type CorsOrigins = "*" | ReadonlyArray<string>

/** Request headers a browser may send cross-origin beyond the CORS-safelisted ones. */
const allowedRequestHeaders = ["Authorization", "Content-Type", "Idempotency-Key", "X-Request-Id"]

/** Response headers a browser script may read beyond the CORS-safelisted ones. */
const exposedResponseHeaders = [
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "X-Request-Id",
  "Idempotent-Replayed",
  "Location",
  "Link",
  "Deprecation",
  "Sunset",
  "WWW-Authenticate",
  "Allow",
]

/** How long a browser may cache a preflight's answer. */
const preflightMaxAgeSeconds = 600

/**
 * CORS for the allowed origins (`@koa/cors`). A preflight (OPTIONS with `Origin` and
 * `Access-Control-Request-Method`) from an allowed origin is answered 204 here, before the key
 * check: browsers send it without credentials. Other responses to an allowed origin carry
 * `Access-Control-Allow-Origin` and expose the headers a client reads. A request from any other
 * origin gets no CORS header, so the browser keeps the answer from the page. Keys travel in
 * `Authorization`, not cookies, so credentials are never allowed.
 */
export const cors = (origins: CorsOrigins, methods: ReadonlyArray<string>): Middleware => {
  const allowed = new Set(origins === "*" ? [] : origins)
  return koaCors({
    // An empty answer makes @koa/cors add no CORS header and pass the request on.
    origin:
      origins === "*"
        ? "*"
        : (ctx) => {
            const origin = ctx.get("Origin")
            return allowed.has(origin) ? origin : ""
          },
    allowMethods: [...methods],
    allowHeaders: allowedRequestHeaders,
    exposeHeaders: exposedResponseHeaders,
    maxAge: preflightMaxAgeSeconds,
  })
}
