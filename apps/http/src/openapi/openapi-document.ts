import { ErrorBody } from "./ErrorBody.js"
import { headerComponents, type DeprecationDates } from "./headers.js"
import { componentSchemas } from "./json-schema.js"
import type { ApiServer, OpenApiDocument, PathItem } from "./openapi-types.js"
import { routeTable, securitySchemeName } from "./route-table.js"

export interface OpenApiInput {
  /** Where the versioned API is mounted (`/v1`): the paths of `Link` and `Location` start with it. */
  readonly basePath: string
  /** The base URLs of the API, each ending in `basePath`. */
  readonly servers: ReadonlyArray<ApiServer>
  /** When `getPet` was deprecated and when it will be removed. */
  readonly getPetDeprecation: DeprecationDates
}

/** The OpenAPI 3.1 description of the API, generated from the core schemas and the route table. */
export const openApiDocument = (input: OpenApiInput): OpenApiDocument => {
  const schemas = componentSchemas()
  schemas.of(ErrorBody)
  const paths: Record<string, PathItem> = {}
  for (const { path, method, operation } of routeTable({ ...input, schemas })) {
    paths[path] = { ...paths[path], [method]: operation }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Petstore",
      version: "1.0.0",
      description:
        "Manage the animals offered in a pet store: list them, add one, fetch one. Every operation needs an API key, sent as `Authorization: Bearer <key>`. Requests and responses are JSON; an error answers with the Error body, whose `status` equals the HTTP status.",
    },
    servers: input.servers,
    tags: [{ name: "pets", description: "The animals of the store." }],
    paths,
    components: {
      schemas: schemas.components(),
      headers: headerComponents(input),
      securitySchemes: {
        [securitySchemeName]: {
          type: "http",
          scheme: "bearer",
          description: "An API key of the service, sent as `Authorization: Bearer <key>`.",
        },
      },
    },
  }
}
