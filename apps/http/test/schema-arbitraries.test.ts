import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { IntFromString, LimitFromString, NewPet, PetId, PetStatus } from "@petstore/core"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { defaultOpenApiDocument } from "../src/openapi/default-document.js"
import type { JsonSchema } from "../src/openapi/openapi-types.js"
import { documentResolver, schemaProblems } from "./json-schema-check.js"
import {
  invalidText,
  invalidValue,
  isValidText,
  jsonText,
  validText,
  validValue,
} from "./schema-arbitraries.js"

const document = defaultOpenApiDocument()
const resolve = documentResolver(document)
const component = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })
const problems = (schema: JsonSchema, value: unknown) => schemaProblems(schema, value, resolve)

describe("the JSON Schema checker", () => {
  const pet = component("Pet")
  const valid = { id: 1, name: "Rex", categoryId: -3, status: "sold" }

  it("accepts a conforming value", () => {
    assert.deepEqual(problems(pet, valid), [])
  })

  it("names each way a value breaks the schema", () => {
    const cases: ReadonlyArray<[unknown, RegExp]> = [
      [{ ...valid, id: undefined }, /\$ lacks id/],
      [{ ...valid, extra: 1 }, /has extra, which is not allowed/],
      [{ ...valid, valueOf: 1 }, /has valueOf, which is not allowed/],
      [{ ...valid, id: "1" }, /\$\.id is not of type integer/],
      [{ ...valid, id: 1.5 }, /\$\.id is not of type integer/],
      [{ ...valid, id: 0 }, /\$\.id is < 1/],
      [{ ...valid, categoryId: 2 ** 53 }, /\$\.categoryId is > 9007199254740991/],
      [{ ...valid, name: "" }, /\$\.name is shorter than 1/],
      [{ ...valid, name: "x".repeat(256) }, /\$\.name is longer than 255/],
      [{ ...valid, status: "lost" }, /\$\.status is not one of/],
      [[valid], /\$ is not of type object/],
    ]
    for (const [value, expected] of cases) {
      assert.match(problems(pet, JSON.parse(JSON.stringify(value))).join("\n"), expected)
    }
  })

  it("counts a string's length in code points, as JSON Schema does", () => {
    assert.deepEqual(problems({ type: "string", maxLength: 2 }, "😀😀"), [])
  })

  it("checks const, pattern and allOf", () => {
    const schema = {
      allOf: [{ type: "string", pattern: "^a" }, { const: "ab" }],
    }
    assert.deepEqual(problems(schema, "ab"), [])
    assert.equal(problems(schema, "ac").length, 1)
    assert.equal(problems(schema, "ba").length, 2)
  })

  it("refuses to judge a keyword it does not know", () => {
    assert.throws(() => problems({ type: "string", format: "email" }, "x"), /unsupported format/)
    assert.throws(() => problems({ oneOf: [] }, "x"), /unsupported keyword oneOf/)
  })
})

/** What the server would read: bigints written as digits, then parsed as JSON. */
const onTheWire = (value: unknown): unknown => JSON.parse(jsonText(value))

describe("values drawn from the document's schemas", () => {
  const decodes = (schema: Schema.Schema.AnyNoContext, value: unknown) =>
    Either.isRight(Schema.decodeUnknownEither(schema)(value))

  it("valid ones conform, and the core schemas accept them", () => {
    fc.assert(
      fc.property(validValue(component("NewPet"), resolve), (value) => {
        assert.deepEqual(problems(component("NewPet"), value), [])
        assert.ok(decodes(NewPet, onTheWire(value)))
      }),
      { numRuns: 500 },
    )
  })

  it("invalid ones break the schema, and the core schemas refuse them", () => {
    fc.assert(
      fc.property(invalidValue(component("NewPet"), resolve), (value) => {
        assert.notDeepEqual(problems(component("NewPet"), onTheWire(value)), [])
        assert.ok(!decodes(NewPet, onTheWire(value)), jsonText(value))
      }),
      { numRuns: 500 },
    )
  })

  it("parameter texts are valid exactly when the core schemas decode them", () => {
    const cases: ReadonlyArray<[string, Schema.Schema.AnyNoContext]> = [
      ["Limit", LimitFromString],
      ["PetId", Schema.compose(IntFromString, PetId)],
      ["PetStatus", PetStatus],
    ]
    for (const [name, schema] of cases) {
      const texts = fc.oneof(
        validText(component(name), resolve),
        invalidText(component(name), resolve),
      )
      fc.assert(
        fc.property(texts, (text) => {
          assert.equal(decodes(schema, text), isValidText(component(name), text, resolve), text)
        }),
        { numRuns: 300 },
      )
    }
  })
})
