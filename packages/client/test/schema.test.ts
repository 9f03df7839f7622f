import assert from "node:assert/strict"
import { readFile } from "node:fs/promises"
import { describe, it } from "node:test"
import {
  documentPath,
  generateDocument,
  generateSchema,
  schemaPath,
} from "../scripts/schema-generator.js"

const stale = (file: string) =>
  `packages/client/${file} is stale: run \`npm run generate -w @petstore/client\` and commit it`

describe("the committed OpenAPI document and types", () => {
  it("openapi.json is the document of the operations @petstore/http serves now", async () => {
    const committed = await readFile(documentPath, "utf8")
    assert.ok(committed === (await generateDocument()), stale("openapi.json"))
  })

  it("src/schema.ts is what openapi-typescript generates from openapi.json", async () => {
    const committed = await readFile(schemaPath, "utf8")
    const document = await readFile(documentPath, "utf8")
    assert.ok(committed === (await generateSchema(document)), stale("src/schema.ts"))
  })
})
