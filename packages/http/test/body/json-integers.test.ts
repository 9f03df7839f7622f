import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { NewPet } from "@petstore/core"
import { assertError } from "@petstore/test-support/error-body"
import { Either, JSONSchema, Schema } from "effect"
import fc from "fast-check"
import { integerFields, parseJsonText } from "../../src/body/json-body.js"
import { fractionalMembers } from "../../src/body/json-integers.js"
import { schemaCodec } from "../../src/codecs/schema-codec.js"
import { decodeRequest } from "../../src/operations/decode.js"
import { readPet, startServer, type TestServer } from "../harness/server.js"

describe("fractionalMembers", () => {
  const found = (text: string) => Object.fromEntries(fractionalMembers(text, integerFields))

  it("finds the object's own integer fields written with a fraction or an exponent", () => {
    assert.deepEqual(found('{"categoryId":1.0}'), { categoryId: "1.0" })
    assert.deepEqual(found(' { "categoryId" : -2.5E-3 , "a" : 1 } '), { categoryId: "-2.5E-3" })
    assert.deepEqual(found('{"categoryId":1}'), {})
    assert.deepEqual(found('{"a":1.0,"categoryId":1,"b":[1e0]}'), {})
  })

  it("ignores strings, nested objects, arrays and other top-level values", () => {
    assert.deepEqual(found('{"name":"\\"categoryId\\":1.0","categoryId":3}'), {})
    assert.deepEqual(found('{"x":{"categoryId":1.0},"categoryId":3}'), {})
    assert.deepEqual(found('[{"categoryId":1.0}]'), {})
    assert.deepEqual(found('["categoryId",1.0]'), {})
    assert.deepEqual(found("1.0"), {})
  })

  it("keeps the last of a repeated key, as JSON.parse does", () => {
    assert.deepEqual(found('{"categoryId":1.0,"categoryId":1}'), {})
    assert.deepEqual(found('{"categoryId":1,"categoryId":1e0}'), { categoryId: "1e0" })
    assert.deepEqual(found('{"categoryId":1.0,"categoryId":"x"}'), {})
    assert.deepEqual(found('{"category\\u0049d":1.0}'), { categoryId: "1.0" })
  })
})

/** The properties of NewPet whose JSON Schema type is integer. */
const integerPropertiesOfNewPet = (): ReadonlyArray<string> => {
  const Definition = Schema.Struct({
    type: Schema.optional(Schema.String),
    properties: Schema.optional(
      Schema.Record({ key: Schema.String, value: Schema.Struct({ $ref: Schema.String }) }),
    ),
  })
  const Root = Schema.Struct({ $defs: Schema.Record({ key: Schema.String, value: Definition }) })
  const { $defs } = Schema.decodeUnknownSync(Root)(JSONSchema.make(NewPet))
  return Object.entries($defs["NewPet"]?.properties ?? {})
    .filter(([, property]) => $defs[property.$ref.replace("#/$defs/", "")]?.type === "integer")
    .map(([name]) => name)
}

describe("integerFields", () => {
  it("are exactly NewPet's integer properties", () => {
    assert.deepEqual([...integerFields].sort(), [...integerPropertiesOfNewPet()].sort())
  })
})

// Bodies as a client may write them: members in any order, any spacing, categoryId written as
// an integer or with a fraction or an exponent (once or repeated, its key escaped or not),
// names that look like numbers, and other members holding any JSON at all.

const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789"), minLength, maxLength })

const integerPart = fc.oneof(
  fc.constant("0"),
  fc.tuple(fc.constantFrom(..."123456789"), digits(0, 20)).map(([first, rest]) => first + rest),
)
const fraction = digits(1, 20).map((text) => `.${text}`)
const exponent = fc
  .tuple(fc.constantFrom("e", "E"), fc.constantFrom("", "+", "-"), digits(1, 4))
  .map((parts) => parts.join(""))

interface Literal {
  readonly text: string
  readonly integer: boolean
}

const integerLiteral: fc.Arbitrary<Literal> = fc.oneof(
  fc.maxSafeInteger().map((value) => ({ text: String(value), integer: true })),
  fc.constantFrom("0", "-0", "9007199254740991", "-9007199254740991").map((text) => ({
    text,
    integer: true,
  })),
)

const fractionalLiteral: fc.Arbitrary<Literal> = fc
  .tuple(
    fc.constantFrom("", "-"),
    integerPart,
    fc.option(fraction, { nil: "" }),
    fc.option(exponent, { nil: "" }),
  )
  .filter(([, , fractionText, exponentText]) => fractionText !== "" || exponentText !== "")
  .map((parts) => ({ text: parts.join(""), integer: false }))

const categoryKey = fc.constantFrom('"categoryId"', '"category\\u0049d"', '"\\u0063ategoryId"')

const petName = fc
  .oneof(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }),
    fc.constantFrom("1.5e3", "R2.D2", "0.5", "1E9", "-0.0", '"categoryId":1.0', "\\"),
  )
  .filter((name) => !name.includes("\u0000"))

const otherKey = fc
  .string({ maxLength: 12 })
  .filter((key) => !["name", "categoryId", "status"].includes(key))

const otherMember = fc.oneof(
  fc.tuple(otherKey, fc.jsonValue({ maxDepth: 4 })).map(([key, value]) => ({
    key: JSON.stringify(key),
    value: JSON.stringify(value),
  })),
  fc.tuple(otherKey, fractionalLiteral).map(([key, literal]) => ({
    key: JSON.stringify(key),
    value: `{"categoryId":${literal.text}}`,
  })),
)

interface Body {
  readonly text: string
  /** The categoryId JSON.parse keeps: the last one written. */
  readonly categoryId: Literal
}

const categoryIdMember = fc.tuple(categoryKey, fc.oneof(integerLiteral, fractionalLiteral))

const body: fc.Arbitrary<Body> = fc
  .tuple(
    petName,
    fc.array(categoryIdMember, { maxLength: 1 }),
    categoryIdMember,
    fc.array(otherMember, { maxLength: 4 }),
    fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
    fc.constantFrom("", " ", "\n\t "),
  )
  .map(([name, earlier, last, others, positions, space]) => {
    const members: Array<{ key: string; value: string }> = others.slice()
    const nameAt = (positions[0] ?? 0) % (members.length + 1)
    members.splice(nameAt, 0, { key: '"name"', value: JSON.stringify(name) })
    // Each categoryId goes after the one before it, so the last written is `last`.
    let after = -1
    for (const [index, [key, literal]] of [...earlier, last].entries()) {
      after += 1 + ((positions[index + 1] ?? 0) % (members.length - after))
      members.splice(after, 0, { key, value: literal.text })
    }
    const written = members.map((member) => `${member.key}${space}:${space}${member.value}`)
    return {
      text: `{${space}${written.join(`${space},${space}`)}${space}}`,
      categoryId: last[1],
    }
  })

const decodeNewPet = decodeRequest(NewPet, "invalid_body")

const isJsonObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

describe("a body's categoryId, fast path or careful path", () => {
  it("is taken exactly when written as an integer, with the value written", () => {
    fc.assert(
      fc.property(body, ({ text, categoryId }) => {
        const parsed = parseJsonText(text)
        assert.ok(Either.isRight(parsed), text)
        const value = parsed.right
        assert.ok(isJsonObject(value), text)
        const decoded = decodeNewPet(value)
        const plain = schemaCodec(NewPet).decodePlain(value)
        const expectTaken = categoryId.integer && Number.isSafeInteger(Number(categoryId.text))
        assert.equal(Either.isRight(decoded), expectTaken, text)
        assert.equal(plain !== undefined, expectTaken, text)
        if (Either.isRight(decoded)) {
          assert.equal(decoded.right.categoryId, Number(categoryId.text), text)
        } else {
          assert.match(decoded.left.message, /categoryId must be an integer/, text)
        }
      }),
      { numRuns: 2_000 },
    )
  })

  it("leaves any other JSON as JSON.parse reads it", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const text = JSON.stringify(value)
        const parsed = parseJsonText(text)
        assert.ok(Either.isRight(parsed), text)
        const hasOwnCategoryId =
          typeof value === "object" && value !== null && Object.hasOwn(value, "categoryId")
        if (!hasOwnCategoryId) assert.deepEqual(parsed.right, JSON.parse(text), text)
      }),
      { numRuns: 1_000 },
    )
  })
})

const categoryIdMessage =
  "categoryId must be an integer between -9007199254740991 and 9007199254740991"

const post = (server: TestServer, body: string, idempotencyKey?: string) =>
  server.api("/pets", {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      ...(idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey }),
    },
  })

describe("categoryId written with a fraction or an exponent, over HTTP", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("refuses the probe's values, which JSON.parse rounds to integers, with 400 naming categoryId", async () => {
    for (const literal of ["9007199254740990.6", "0.99999999999999999", "1e-400"]) {
      const message = await assertError(
        await post(server, `{"name":"Rex","categoryId":${literal}}`),
        400,
        "invalid_body",
      )
      assert.equal(message, categoryIdMessage, literal)
    }
  })

  it("refuses 1.0, 1e0 and -0.0: a fraction or an exponent is not an integer, whatever its value", async () => {
    for (const literal of ["1.0", "1e0", "-0.0", "1E+2", "10e-1"]) {
      const message = await assertError(
        await post(server, `{"name":"Rex","categoryId":${literal}}`),
        400,
        "invalid_body",
      )
      assert.equal(message, categoryIdMessage, literal)
    }
  })

  it("names every field at fault, as for any other invalid categoryId", async () => {
    const message = await assertError(await post(server, '{"categoryId":1.0}'), 400, "invalid_body")
    assert.equal(message, `name is missing; ${categoryIdMessage}`)
  })

  it("reads a key however it is escaped, and the last of a repeated one", async () => {
    await assertError(
      await post(server, '{"name":"Rex","category\\u0049d":2.0}'),
      400,
      "invalid_body",
    )
    await assertError(
      await post(server, '{"name":"Rex","categoryId":2,"categoryId":2.0}'),
      400,
      "invalid_body",
    )
    const last = await post(server, '{"name":"Rex","categoryId":2.0,"categoryId":2}')
    assert.equal(last.status, 201)
    assert.equal((await readPet(last)).categoryId, 2)
  })

  it("takes a name that reads like a number, and fractions elsewhere in the body", async () => {
    const response = await post(
      server,
      '{"name":"1.5e3","categoryId":7,"weight":1.0,"nested":{"categoryId":1.5},"list":[2e0]}',
    )
    assert.equal(response.status, 201)
    const pet = await readPet(response)
    assert.equal(pet.name, "1.5e3")
    assert.equal(pet.categoryId, 7)
  })

  it("a body with …990.6 under a key first used with …991 is refused, not a replay", async () => {
    const key = `fraction-${process.pid}-${Date.now()}`
    const first = await post(server, '{"name":"Big","categoryId":9007199254740991}', key)
    assert.equal(first.status, 201)
    const second = await post(server, '{"name":"Big","categoryId":9007199254740990.6}', key)
    assert.equal(second.headers.get("idempotent-replayed"), null)
    const message = await assertError(second, 400, "invalid_body")
    assert.equal(message, categoryIdMessage)
  })
})
