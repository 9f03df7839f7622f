import type { ApiRouter } from "./router.js"
import type { OpenApiDocument } from "../vocabulary/openapi-types.js"

/** `GET {basePath}/openapi.json`: the document, open to all. It is serialized once. */
export const registerOpenApiRoutes = (
  router: ApiRouter,
  basePath: string,
  document: OpenApiDocument,
): void => {
  const body = JSON.stringify(document)
  router.get(`${basePath}/openapi.json`, (ctx) => {
    ctx.type = "application/json"
    ctx.body = body
  })
}
