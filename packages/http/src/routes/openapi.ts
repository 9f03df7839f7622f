import type { ApiRouter } from "./router.js"
import type { OpenApiDocument } from "../vocabulary/openapi-types.js"
import { mountPathOf, perMountPath } from "../request/mount-path.js"

/**
 * `GET {basePath}/openapi.json`: the document, open to all. `documentAt` gives it for a mount
 * path (its `servers` and the `Link` and `Location` it describes start there); it is built and
 * serialized once per mount path the document is asked under, the unmounted one at once, so a
 * declaration it cannot describe fails here rather than on a request.
 */
export const registerOpenApiRoutes = (
  router: ApiRouter,
  basePath: string,
  documentAt: (mountPath: string) => OpenApiDocument,
): void => {
  const bodyAt = perMountPath((mountPath) => JSON.stringify(documentAt(mountPath)))
  bodyAt("")
  router.get(`${basePath}/openapi.json`, (ctx) => {
    ctx.type = "application/json"
    ctx.body = bodyAt(mountPathOf(ctx))
  })
}
