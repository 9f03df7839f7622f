import { Either } from "effect"
import { petOperations } from "../api/pet-operations.js"
import { readConfig } from "../config.js"
import { openApiDocument } from "./openapi-document.js"
import type { OpenApiDocument } from "./openapi-types.js"
import { apiServers } from "./servers.js"

/** The document of a server on the default configuration: what `apps/http/openapi.json` holds. */
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
