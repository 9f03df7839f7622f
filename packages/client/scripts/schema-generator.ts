import { fileURLToPath } from "node:url"
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript"
import { format, resolveConfig } from "prettier"

/** The committed OpenAPI document of the HTTP app: the only thing of it this package reads. */
export const documentPath = fileURLToPath(
  new URL("../../../apps/http/openapi.json", import.meta.url),
)

/** Where the generated types are committed. */
export const schemaPath = fileURLToPath(new URL("../src/schema.ts", import.meta.url))

/** The types of the document, as `openapi-typescript` writes them, in the repository's format. */
export const generateSchema = async (): Promise<string> => {
  const ast = await openapiTS(new URL(`file://${documentPath}`))
  const options = await resolveConfig(schemaPath)
  return format(`${COMMENT_HEADER}${astToString(ast)}`, { ...options, filepath: schemaPath })
}
