import fc from "fast-check"
import type { JsonSchema, JsonValue } from "../../src/index.js"
import { schemaChecker, type Resolve } from "./json-schema-check.js"

/**
 * fast-check arbitraries drawn from the document's JSON Schemas: values a schema accepts, values
 * it refuses, and both as the text of a query or path parameter. Refused values are checked
 * against the schema itself, so a mutation that happens to stay valid is never sent as invalid.
 */

const resolved = (schema: JsonSchema, resolve: Resolve): JsonSchema => {
  const ref = schema["$ref"]
  return typeof ref === "string" ? resolved(resolve(ref), resolve) : schema
}

const numberOr = (value: JsonValue | undefined, fallback: number) =>
  typeof value === "number" ? value : fallback

const bounds = (schema: JsonSchema) => ({
  min: numberOr(schema["minimum"], -Number.MAX_SAFE_INTEGER),
  max: numberOr(schema["maximum"], Number.MAX_SAFE_INTEGER),
})

const lengths = (schema: JsonSchema) => ({
  min: numberOr(schema["minLength"], 0),
  max: numberOr(schema["maxLength"], 64),
})

const isSchema = (value: JsonValue | undefined): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const objectParts = (schema: JsonSchema) => {
  const properties = schema["properties"]
  const required = schema["required"]
  const entries: ReadonlyArray<[string, JsonSchema]> = isSchema(properties)
    ? Object.entries(properties).flatMap(([name, field]): Array<[string, JsonSchema]> =>
        isSchema(field) ? [[name, field]] : [],
      )
    : []
  return {
    properties: new Map(entries),
    required: Array.isArray(required)
      ? required.filter((name): name is string => typeof name === "string")
      : [],
    closed: schema["additionalProperties"] === false,
  }
}

const isRecord = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const without = (value: unknown, name: string): unknown =>
  isRecord(value)
    ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== name))
    : value

const withField = (value: unknown, name: string, field: unknown): unknown =>
  isRecord(value) ? { ...value, [name]: field } : value

const integerIn = (min: number, max: number) =>
  fc.oneof(fc.constantFrom(min, max), fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number))

/** Whether a string matches the schema's `pattern` (JSON Schema patterns are Unicode-aware). */
const matchesPattern = (schema: JsonSchema) => {
  const pattern = schema["pattern"]
  const expression = typeof pattern === "string" ? new RegExp(pattern, "u") : undefined
  return (text: string) => expression === undefined || expression.test(text)
}

// Lengths count code points, as JSON Schema and the core's PetName both do.
const textOfLength = (min: number, max: number) =>
  fc.oneof(
    fc.string({ unit: "grapheme-ascii", minLength: min, maxLength: max }),
    fc.constantFrom("x".repeat(min), "x".repeat(max), "🐕".repeat(max)),
    fc.string({ unit: "binary", minLength: min, maxLength: max }),
  )

/** Values `schema` accepts; objects with open properties get extra ones now and then. */
export const validValue = (schema: JsonSchema, resolve: Resolve): fc.Arbitrary<unknown> => {
  const target = resolved(schema, resolve)
  const options = target["enum"]
  if (Array.isArray(options)) return fc.constantFrom(...options)
  switch (target["type"]) {
    case "integer": {
      const { min, max } = bounds(target)
      return integerIn(min, max)
    }
    case "string": {
      const { min, max } = lengths(target)
      return textOfLength(min, max).filter(matchesPattern(target))
    }
    case "object": {
      const { properties, required, closed } = objectParts(target)
      const model = Object.fromEntries(
        [...properties].map(([name, field]) => [name, validValue(field, resolve)]),
      )
      const record = fc.record(model, { requiredKeys: required })
      if (closed) return record
      const extra = fc.dictionary(
        fc.string({ maxLength: 12 }).filter((name) => !properties.has(name)),
        fc.jsonValue({ maxDepth: 2 }),
        { maxKeys: 3 },
      )
      return fc.tuple(record, extra).map(([fields, more]) => ({ ...more, ...fields }))
    }
    default:
      throw new Error(`cannot generate values of ${JSON.stringify(target)}`)
  }
}

const exact = 2n ** 53n

/** Integers just beyond the bounds, where an off-by-one or a wrong bound shows. */
const justOutside = (min: number, max: number) =>
  fc
    .oneof(
      fc.bigInt({ min: BigInt(min) - 100n, max: BigInt(min) - 1n }),
      fc.bigInt({ min: BigInt(max) + 1n, max: BigInt(max) + 100n }),
    )
    // Past 2^53 a JavaScript number would round: such integers are sent as their digits.
    .map((n) => (n >= -exact && n <= exact ? Number(n) : n))

const farOutside = fc.oneof(
  fc.constantFrom(2 ** 53, -(2 ** 53), 1e20, -1e20, Number.MAX_VALUE),
  fc.bigInt({ min: 10n ** 16n, max: 10n ** 40n }).map((n) => (n % 2n === 0n ? n : -n)),
)

const nonIntegers = fc
  .double({ noNaN: true, noDefaultInfinity: true })
  .filter((n) => !Number.isInteger(n))

const mutations = (
  schema: JsonSchema,
  resolve: Resolve,
): Array<fc.MaybeWeightedArbitrary<unknown>> => {
  const anyJson = fc.jsonValue({ maxDepth: 2 })
  switch (schema["type"]) {
    case "integer": {
      const { min, max } = bounds(schema)
      return [
        anyJson,
        { weight: 2, arbitrary: justOutside(min, max) },
        farOutside,
        nonIntegers,
        integerIn(min, max).map(String),
      ]
    }
    case "string": {
      const { min, max } = lengths(schema)
      const options = schema["enum"]
      return [
        anyJson,
        fc.string({ unit: "grapheme-ascii", minLength: max + 1, maxLength: max + 20 }),
        ...(min > 0 ? [fc.string({ maxLength: min - 1 })] : []),
        // Control characters spliced into otherwise fine text, where the pattern refuses them.
        ...(schema["pattern"] === undefined
          ? []
          : [
              fc
                .tuple(
                  fc.string({ unit: "grapheme-ascii", minLength: min, maxLength: max - 1 }),
                  fc.integer({ min: 0, max: 0x1f }),
                )
                .map(([text, code]) => `${text}${String.fromCharCode(code)}`)
                .filter((text) => !matchesPattern(schema)(text)),
            ]),
        ...(Array.isArray(options)
          ? [
              fc
                .constantFrom(...options.map(String))
                .chain((option) =>
                  fc.constantFrom(
                    option.toUpperCase(),
                    ` ${option}`,
                    `${option}s`,
                    option.slice(1),
                  ),
                ),
            ]
          : []),
      ]
    }
    case "object": {
      const { properties, required, closed } = objectParts(schema)
      const valid = validValue(schema, resolve)
      return [
        fc.oneof(fc.array(anyJson, { maxLength: 3 }), fc.string(), fc.integer(), fc.constant(null)),
        ...(required.length > 0
          ? [
              fc
                .tuple(valid, fc.constantFrom(...required))
                .map(([value, name]) => without(value, name)),
            ]
          : []),
        ...(properties.size > 0
          ? [
              {
                weight: 3,
                arbitrary: fc
                  .constantFrom(...properties)
                  .chain(([name, field]) =>
                    fc
                      .tuple(valid, invalidValue(field, resolve))
                      .map(([value, bad]) => withField(value, name, bad)),
                  ),
              },
            ]
          : []),
        ...(closed
          ? [
              fc
                .tuple(
                  valid,
                  fc.string({ minLength: 1 }).filter((name) => !properties.has(name)),
                )
                .map(([value, name]) => withField(value, name, true)),
            ]
          : []),
      ]
    }
    default:
      return [anyJson]
  }
}

/** Values `schema` refuses: wrong types, out of range, missing or broken fields. */
export const invalidValue = (schema: JsonSchema, resolve: Resolve): fc.Arbitrary<unknown> => {
  const target = resolved(schema, resolve)
  const { problems } = schemaChecker(resolve)
  return fc
    .oneof(...mutations(target, resolve))
    .filter((value) => problems(target, value).length > 0)
}

const decimalInteger = /^-?[0-9]+$/
const loneSurrogate = /\p{Cs}/u

/** Whether `text`, as a parameter value, is valid for `schema`: integers in decimal digits. */
export const isValidText = (schema: JsonSchema, text: string, resolve: Resolve): boolean => {
  const target = resolved(schema, resolve)
  const { problems } = schemaChecker(resolve)
  if (target["type"] !== "integer") return problems(target, text).length === 0
  return decimalInteger.test(text) && problems(target, Number(text)).length === 0
}

const textOf = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "bigint" ? String(value) : jsonText(value)

/** Parameter values `schema` accepts, as they appear in a URL before percent-encoding. */
export const validText = (schema: JsonSchema, resolve: Resolve): fc.Arbitrary<string> =>
  validValue(schema, resolve).map(textOf)

/** Parameter values `schema` refuses. */
export const invalidText = (schema: JsonSchema, resolve: Resolve): fc.Arbitrary<string> =>
  fc
    .oneof(
      { weight: 4, arbitrary: invalidValue(schema, resolve).map(textOf) },
      fc.string(),
      fc.constantFrom("", " ", "1.5", "1e3", "0x10", " 1", "1 ", "+1", "١", "null", "[]"),
    )
    .filter((text) => !loneSurrogate.test(text) && !isValidText(schema, text, resolve))

/** JSON text of `value`, writing a bigint as its digits (a number too large for JavaScript). */
export const jsonText = (value: unknown): string => {
  if (typeof value === "bigint") return String(value)
  if (Array.isArray(value)) return `[${value.map((item: unknown) => jsonText(item)).join(",")}]`
  if (isRecord(value)) {
    const fields = Object.entries(value).map(
      ([key, field]) => `${JSON.stringify(key)}:${jsonText(field)}`,
    )
    return `{${fields.join(",")}}`
  }
  return JSON.stringify(value)
}
