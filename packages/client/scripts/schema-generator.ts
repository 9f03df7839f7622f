import { fileURLToPath } from "node:url"
import { openApiDocument, petOperations, sameOriginServers } from "@petstore/http"
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript"
import { format, resolveConfig } from "prettier"

/** The version segment a client's base URL ends in; the document's paths follow it. */
const basePath = "/v1"

/** The OpenAPI document the client is typed from, committed in this package. */
export const documentPath = fileURLToPath(new URL("../openapi.json", import.meta.url))

/** Where the generated types are committed. */
export const schemaPath = fileURLToPath(new URL("../src/schema.ts", import.meta.url))

const formatted = async (text: string, filepath: string): Promise<string> =>
  format(text, { ...(await resolveConfig(filepath)), filepath })

/**
 * The document of the operations `@petstore/http` serves, as a server on the default
 * configuration describes them, in the repository's format.
 */
export const generateDocument = (): Promise<string> =>
  formatted(
    JSON.stringify(
      openApiDocument({
        basePath,
        servers: sameOriginServers(basePath),
        operations: petOperations,
      }),
    ),
    documentPath,
  )

/** The types of a document, as `openapi-typescript` writes them, in the repository's format. */
export const generateSchema = async (documentText: string): Promise<string> => {
  const ast = await openapiTS(documentText)
  return formatted(`${COMMENT_HEADER}${astToString(ast)}`, schemaPath)
}
