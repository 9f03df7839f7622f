import { writeFile } from "node:fs/promises"
import { documentPath, generateDocument, generateSchema, schemaPath } from "./schema-generator.js"

const document = await generateDocument()
await writeFile(documentPath, document)
process.stdout.write(`wrote ${documentPath}\n`)
await writeFile(schemaPath, await generateSchema(document))
process.stdout.write(`wrote ${schemaPath}\n`)
