import { Either } from "effect"
import { petOperations, openApiDocument, type OpenApiDocument, apiServers } from "@petstore/http"
import { readConfig } from "./settings/read-config.js"

/** The document of a server on the default configuration: what `apps/server/openapi.json` holds. */
export const defaultOpenApiDocument = (): OpenApiDocument => {
  const config = Either.getOrThrowWith(
    readConfig({}),
    (problems) => new Error(`the default configuration is invalid: ${problems.join("; ")}`),
  )
  return openApiDocument({
    basePath: config.basePath,
    servers: apiServers(config),
    operations: petOperations,
  })
}
