import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { IntFromString, LimitFromString, NewPet, PetId, PetStatus } from "@petstore/core"
import { Either, Schema } from "effect"
import fc from "fast-check"
import {
  openApiDocument,
  petOperations,
  sameOriginServers,
  type JsonSchema,
} from "../../src/index.js"
import { operationsOf } from "./contract.js"
import { documentResolver, schemaChecker } from "./json-schema-check.js"
import {
  invalidText,
  invalidValue,
  isValidText,
  jsonText,
  validText,
  validValue,
} from "./schema-arbitraries.js"

const document = openApiDocument({
  basePath: "/v1",
  servers: sameOriginServers("/v1"),
  operations: petOperations,
})
const resolve = documentResolver(document)
const component = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` })
const { problems } = schemaChecker(resolve)

describe("the JSON Schema checker", () => {
  const pet = component("Pet")
  const valid = { id: 1, name: "Rex", categoryId: -3, status: "sold" }

  it("accepts a conforming value", () => {
    assert.deepEqual(problems(pet, valid), [])
  })

  it("names each way a value breaks the schema, following refs into the components", () => {
    const cases: ReadonlyArray<[unknown, RegExp]> = [
      [{ ...valid, id: undefined }, /^# must have required property 'id'/],
      [{ ...valid, extra: 1 }, /^# must NOT have additional properties .*"extra"/],
      [{ ...valid, valueOf: 1 }, /^# must NOT have additional properties .*"valueOf"/],
      [{ ...valid, id: "1" }, /^#\/id must be integer/],
      [{ ...valid, id: 1.5 }, /^#\/id must be integer/],
      [{ ...valid, id: 0 }, /^#\/id must be >= 1/],
      [{ ...valid, categoryId: 2 ** 53 }, /^#\/categoryId must be <= 9007199254740991/],
      [{ ...valid, name: "" }, /^#\/name must NOT have fewer than 1 characters/],
      [{ ...valid, name: "x".repeat(256) }, /^#\/name must NOT have more than 255 characters/],
      [{ ...valid, name: "a\u0000" }, /^#\/name must match pattern/],
      [{ ...valid, status: "lost" }, /^#\/status must be equal to one of the allowed values/],
      [[valid], /^# must be object/],
    ]
    for (const [value, expected] of cases) {
      assert.match(problems(pet, JSON.parse(JSON.stringify(value))).join("\n"), expected)
    }
  })

  it("counts a string's length in code points, as JSON Schema does", () => {
    assert.deepEqual(problems({ type: "string", maxLength: 2 }, "😀😀"), [])
  })

  it("checks const, pattern and allOf, reporting every failure", () => {
    const schema = {
      allOf: [{ type: "string", pattern: "^a" }, { const: "ab" }],
    }
    assert.deepEqual(problems(schema, "ab"), [])
    assert.equal(problems(schema, "ac").length, 1)
    assert.equal(problems(schema, "ba").length, 2)
  })

  it("checks the OpenAPI formats the document uses", () => {
    const int32 = { type: "integer", format: "int32" }
    assert.deepEqual(problems(int32, 2 ** 31 - 1), [])
    assert.match(problems(int32, 2 ** 31).join(), /must match format "int32"/)
    const int64 = { type: "integer", format: "int64" }
    assert.deepEqual(problems(int64, Number.MAX_SAFE_INTEGER), [])
    assert.match(problems(int64, 2 ** 63).join(), /must match format "int64"/)
    const uri = { type: "string", format: "uri-reference" }
    assert.deepEqual(problems(uri, "/v1/pets/1?x=%20#top"), [])
    assert.match(problems(uri, "/v1/pets/ 1").join(), /must match format "uri-reference"/)
  })

  it("judges every schema the document uses", () => {
    const schemas = [
      ...operationsOf(document).flatMap(({ operation }) => [
        ...(operation.parameters ?? []).map(({ schema }) => schema),
        ...Object.values(operation.requestBody?.content ?? {}).map(({ schema }) => schema),
        ...Object.values(operation.responses).flatMap((response) => [
          ...Object.values(response.content ?? {}).map(({ schema }) => schema),
          ...Object.values(response.headers ?? {}).flatMap((header) =>
            "$ref" in header ? [] : [header.schema],
          ),
        ]),
      ]),
      ...Object.values(document.components.headers).map(({ schema }) => schema),
      ...Object.values(document.components.schemas),
    ]
    assert.ok(schemas.length > 20)
    for (const schema of schemas) assert.doesNotThrow(() => problems(schema, null))
  })

  it("refuses to judge a keyword, format or ref it does not know", () => {
    assert.throws(() => problems({ type: "string", format: "email" }, "x"), /unknown format/)
    assert.throws(
      () => problems({ type: "string", maxlength: 3 }, "x"),
      /unknown keyword: "maxlength"/,
    )
    assert.throws(() => problems(component("Cat"), "x"), /unresolvable \$ref/)
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
