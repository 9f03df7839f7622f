import type { Middleware } from "koa"
import type { Deprecation } from "../operations/operation.js"

/** The headers every response of a deprecated operation carries, whatever its status. */
export const deprecationHeaders = (deprecation: Deprecation, basePath: string) => ({
  Deprecation: `@${Math.floor(deprecation.since.getTime() / 1000)}`,
  Sunset: deprecation.sunset.toUTCString(),
  Link: `<${basePath}${deprecation.successor}>; rel="successor-version"`,
})

/**
 * Marks every response of a deprecated operation: placed before authentication in the
 * operation's own route, so that even a 401 tells the client the operation is going away.
 */
export const deprecation = (deprecation: Deprecation, basePath: string): Middleware => {
  const headers = deprecationHeaders(deprecation, basePath)
  return async (ctx, next) => {
    ctx.set(headers)
    await next()
  }
}
