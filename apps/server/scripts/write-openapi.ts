import { writeFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { format, resolveConfig } from "prettier"
import { defaultOpenApiDocument } from "../src/default-document.js"

/** Writes the OpenAPI document to apps/server/openapi.json, formatted as the repository formats JSON. */
const target = fileURLToPath(new URL("../openapi.json", import.meta.url))
const options = await resolveConfig(target)
const text = await format(JSON.stringify(defaultOpenApiDocument()), {
  ...options,
  filepath: target,
})
await writeFile(target, text)
process.stdout.write(`wrote ${target}\n`)
