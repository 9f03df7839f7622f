import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { openApiDocument } from "../../src/openapi/openapi-document.js"
import { sameOriginServers } from "../../src/openapi/servers.js"
import { IdempotencyKeyHeader } from "../../src/operations/idempotency-key-header.js"
import { petOperations } from "../../src/operations/pet-operations.js"

const basePath = "/v1"
const document = openApiDocument({
  basePath,
  servers: sameOriginServers(basePath),
  operations: petOperations,
})

describe("IdempotencyKeyHeader", () => {
  it("the document's pattern for the header accepts exactly what the server accepts", () => {
    const parameter = document.paths["/pets"]?.post?.parameters?.find(
      ({ name }) => name === "Idempotency-Key",
    )
    const source = parameter?.schema["pattern"]
    assert.ok(typeof source === "string")
    const pattern = new RegExp(source)
    const decode = Schema.decodeUnknownEither(IdempotencyKeyHeader)
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary-ascii", maxLength: 260 }),
          fc.string({ unit: "grapheme-ascii", minLength: 254, maxLength: 258 }),
          fc.string({ unit: "grapheme-ascii", maxLength: 20 }).map((text) => `"${text}"`),
        ),
        (value) => {
          assert.equal(pattern.test(value), Either.isRight(decode(value)), JSON.stringify(value))
        },
      ),
      { numRuns: 2000 },
    )
  })
})
