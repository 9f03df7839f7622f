import { writeFile } from "node:fs/promises"
import { generateSchema, schemaPath } from "./schema-generator.js"

await writeFile(schemaPath, await generateSchema())
process.stdout.write(`wrote ${schemaPath}\n`)
