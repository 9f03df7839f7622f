import assert from "node:assert/strict"
import { readFile } from "node:fs/promises"
import { describe, it } from "node:test"
import { generateSchema, schemaPath } from "../scripts/schema-generator.js"

describe("src/schema.ts", () => {
  it("is what openapi-typescript generates from apps/http/openapi.json now", async () => {
    const committed = await readFile(schemaPath, "utf8")
    assert.ok(
      committed === (await generateSchema()),
      "packages/client/src/schema.ts is stale: run `npm run generate -w @petstore/client` and commit it",
    )
  })
})
