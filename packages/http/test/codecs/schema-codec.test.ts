import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { CategoryId, ListPetsQuery, NewPet, Pet, PetId } from "@petstore/core"
import { Arbitrary, Either, FastCheck as fc, Schema } from "effect"
import { schemaCodec } from "../../src/codecs/schema-codec.js"
import { ErrorBody } from "../../src/openapi/ErrorBody.js"
import { createPetOperation, getPetOperation, Pets } from "../../src/operations/pet-api.js"

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Values no schema here takes, or takes only just: the edges of each rule. */
const oddValues = fc.oneof(
  fc.constantFrom<unknown>(
    undefined,
    null,
    Number.NaN,
    -0,
    0,
    1.5,
    2 ** 53,
    -(2 ** 53),
    Number.MAX_SAFE_INTEGER,
    "",
    "\ud800",
    "a\u0000",
    "\ud83d\udc36",
    "x".repeat(256),
    "🐕".repeat(255),
    "sold",
    "Sold",
    "1",
    "01",
    [],
    {},
    true,
  ),
  fc.anything({ maxDepth: 2 }),
)

type Mutation = "set" | "drop" | "extra" | "deep"

/** The value with one part changed: a property set, dropped or added, an item replaced. */
const mutate = (value: unknown, at: number, odd: unknown, mutation: Mutation): unknown => {
  if (Array.isArray(value)) {
    if (value.length === 0) return [odd]
    const index = at % value.length
    const copy: Array<unknown> = [...value]
    copy[index] = mutate(copy[index], Math.floor(at / value.length), odd, mutation)
    return copy
  }
  if (!isRecord(value)) return odd
  const extraName = ["extra", "__proto__", "constructor", "0"][at % 4] ?? "extra"
  if (mutation === "extra") return { ...value, [extraName]: odd }
  const names = Object.keys(value)
  const name = names[at % Math.max(1, names.length)]
  if (name === undefined) return odd
  if (mutation === "drop")
    return Object.fromEntries(names.filter((n) => n !== name).map((n) => [n, value[n]]))
  if (mutation === "deep") return { ...value, [name]: mutate(value[name], at, odd, "set") }
  return { ...value, [name]: odd }
}

/** Every own key, in order, all the way down: two values built alike have the same. */
const keyOrder = (value: unknown): unknown =>
  typeof value === "object" && value !== null
    ? Reflect.ownKeys(value).map((key) => [String(key), keyOrder(Reflect.get(value, key))])
    : null

/** Input for a decoder: the encoded form of valid values, of loose ones, mutations, anything. */
const inputsFor = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeSync(schema)
  const valid = Arbitrary.make(schema).map((value) => encode(value))
  const loose = Arbitrary.make(Schema.encodedSchema(schema))
  const mutation = fc.constantFrom<Mutation>("set", "drop", "extra", "deep")
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 2, arbitrary: loose },
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.oneof(valid, loose), fc.nat(), oddValues, mutation)
        .map(([value, at, odd, kind]) => mutate(value, at, odd, kind)),
    },
    { weight: 1, arbitrary: oddValues },
  )
}

const checkCodec = <A, I>(
  name: string,
  schema: Schema.Schema<A, I>,
  expected: { readonly encoder: boolean; readonly decoder: boolean },
  numRuns: number,
) =>
  describe(`the codec of ${name}`, () => {
    const codec = schemaCodec(schema)
    const encode = Schema.encodeSync(schema)
    const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })

    it(`is compiled as expected: encoder ${expected.encoder}, decoder ${expected.decoder}`, () => {
      assert.deepEqual(codec.compiled, expected)
    })

    it("writes exactly what JSON.stringify of the schema's encoding writes, again and again", () => {
      fc.assert(
        fc.property(Arbitrary.make(schema), (value) => {
          const expected = JSON.stringify(encode(value))
          assert.equal(codec.encodeJson(value), expected)
          // The second time from the texts kept for class instances.
          assert.equal(codec.encodeJson(value), expected)
        }),
        { numRuns },
      )
    })

    it("decodes exactly what the schema decodes, takes every valid input, and nothing else", () => {
      fc.assert(
        fc.property(inputsFor(schema), (input) => {
          const plain = codec.decodePlain(input)
          const decoded = decode(input)
          if (Either.isLeft(decoded)) return assert.equal(plain, undefined)
          if (!expected.decoder) return assert.equal(plain, undefined)
          assert.notEqual(plain, undefined, "a valid input is taken by the compiled decoder")
          assert.deepStrictEqual(plain, decoded.right)
          assert.deepStrictEqual(keyOrder(plain), keyOrder(decoded.right))
        }),
        { numRuns: numRuns * 3 },
      )
    })
  })

const compiled = { encoder: true, decoder: true }

checkCodec("Pet", Pet, compiled, 1_000)
checkCodec("Pets", Pets, compiled, 150)
checkCodec("NewPet", NewPet, compiled, 1_000)
checkCodec("Error", ErrorBody, compiled, 300)
checkCodec(
  "getPet's path parameters",
  getPetOperation.params.schema,
  { encoder: false, decoder: true },
  300,
)
checkCodec(
  "createPet's headers (an optional transformation: a union of it and undefined)",
  createPetOperation.headers.schema,
  { encoder: false, decoder: false },
  300,
)
// Shapes the compilers leave to the schema, still right through it.
checkCodec(
  "listPets' query (a defaulted property)",
  ListPetsQuery,
  { encoder: false, decoder: false },
  200,
)
checkCodec(
  "a record",
  Schema.Record({ key: Schema.String, value: Schema.Number }),
  { encoder: false, decoder: false },
  200,
)
checkCodec("a struct of nothing", Schema.Struct({}), { encoder: false, decoder: true }, 200)
checkCodec(
  "a struct with an index-like name",
  Schema.Struct({ 1: Schema.String, b: Schema.Number }),
  { encoder: false, decoder: true },
  200,
)
checkCodec("a date", Schema.Struct({ at: Schema.Date }), { encoder: false, decoder: true }, 200)
checkCodec(
  "a tuple",
  Schema.Tuple(Schema.String, Schema.Number),
  { encoder: false, decoder: false },
  200,
)
checkCodec(
  "optional and nullable fields",
  Schema.Struct({
    a: Schema.optional(Schema.String),
    b: Schema.NullOr(Schema.Number),
    c: Schema.optionalWith(Schema.Boolean, { exact: true }),
    d: Schema.Array(Schema.Literal(1, "one", true, null)),
  }),
  compiled,
  500,
)

describe("the codec of NewPet, on the inputs the old hand-written decoder was tested with", () => {
  const { decodePlain } = schemaCodec(NewPet)

  it("takes a plainly valid body, ignoring other properties", () => {
    const pet = decodePlain({ status: "sold", categoryId: -3, name: "Rex", extra: [1] })
    assert.ok(pet instanceof NewPet)
    assert.deepEqual(Object.keys(pet), ["name", "categoryId", "status"])
  })

  it("leaves to the schema a name with a lone surrogate or U+0000, as PetName refuses them", () => {
    for (const name of ["\ud800", "a\udc00b", "a\u0000", "", "x".repeat(256)]) {
      assert.equal(decodePlain({ name, categoryId: 1 }), undefined, JSON.stringify(name))
    }
    assert.ok(decodePlain({ name: "\ud83d\udc36".repeat(255), categoryId: 1 }) instanceof NewPet)
  })

  it("refuses a status that is present but undefined, as the schema's exact optional does", () => {
    assert.equal(decodePlain({ name: "Rex", categoryId: 1, status: undefined }), undefined)
  })
})

describe("the texts of class instances", () => {
  it("are written once per instance and kept: a page of the same pets joins texts it has", () => {
    const pets = schemaCodec(Pets)
    const rex = Pet.make({
      id: PetId.make(1),
      name: "Rex",
      categoryId: CategoryId.make(1),
      status: "available",
    })
    const first = pets.encodeJson([rex, rex])
    // Instances never change; were one to, the text kept for it would show it was not rewritten.
    Object.defineProperty(rex, "name", { value: "Changed" })
    assert.equal(pets.encodeJson([rex]), `[${first.slice(1, first.indexOf("},") + 1)}]`)
    const other = Pet.make({ id: PetId.make(1), name: "Changed", categoryId: CategoryId.make(1) })
    assert.equal(pets.encodeJson([other]), '[{"id":1,"name":"Changed","categoryId":1}]')
  })
})

describe("the compiled encoder's strings and numbers", () => {
  const schema = Schema.Struct({
    text: Schema.String,
    number: Schema.Number,
    either: Schema.Union(Schema.String, Schema.Number),
  })
  const codec = schemaCodec(schema)
  const encode = Schema.encodeSync(schema)
  const texts = fc.oneof(
    fc.string({ unit: "binary" }),
    fc.string({
      unit: fc.constantFrom("a", '"', "\\", "\n", "\u0000", "\u001f", "\u007f", "\u2028", "é"),
    }),
    fc.string({ unit: fc.constantFrom("a", "\ud800", "\udc00", "\ud83d\ude00") }),
  )
  const numbers = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.constantFrom(-0, Number.NaN, Infinity, -Infinity, 1e21, 5e-324, 2 ** 53),
  )

  it("are escaped and written exactly as JSON.stringify writes them", () => {
    assert.equal(codec.compiled.encoder, true)
    fc.assert(
      fc.property(texts, numbers, fc.oneof(texts, numbers), (text, number, either) => {
        const value = { text, number, either }
        assert.equal(codec.encodeJson(value), JSON.stringify(encode(value)))
      }),
      { numRuns: 5_000 },
    )
  })
})
