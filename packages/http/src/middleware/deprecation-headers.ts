import type { Middleware } from "koa"
import { deprecationHeaders, type Deprecation } from "../operations/Deprecation.js"
import { mountPathOf, perMountPath } from "../request/mount-path.js"

/**
 * Marks every response of a deprecated operation: placed before authentication in the
 * operation's own route, so that even a 401 tells the client the operation is going away. The
 * successor's `Link` names it where the client reaches it: under the app's mount path, if any.
 */
export const deprecationHeadersOf = (deprecation: Deprecation, basePath: string): Middleware => {
  const headersAt = perMountPath((mountPath) =>
    deprecationHeaders(deprecation, `${mountPath}${basePath}`),
  )
  return async (ctx, next) => {
    ctx.set(headersAt(mountPathOf(ctx)))
    await next()
  }
}
