import Router from "@koa/router"
import type { OpenApiDocument } from "./openapi-types.js"

/** `GET {basePath}/openapi.json`: the document, open to all. It is serialized once. */
export const openApiRoutes = (basePath: string, document: OpenApiDocument) => {
  const body = JSON.stringify(document)
  const router = new Router()
  router.get(`${basePath}/openapi.json`, (ctx) => {
    ctx.type = "application/json"
    ctx.body = body
  })
  return router
}
