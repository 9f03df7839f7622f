import { isDeepStrictEqual } from "node:util"
import type { JsonSchema, JsonValue, OpenApiDocument } from "../src/openapi/openapi-types.js"

/**
 * A checker for the part of JSON Schema 2020-12 the OpenAPI document uses. A keyword it does not
 * know is an error rather than ignored, so a schema it cannot judge never passes by default.
 */

export type Resolve = (ref: string) => JsonSchema

const annotations = new Set(["description", "default", "examples", "title", "deprecated"])
/** Formats whose meaning the bounds next to them already state. */
const knownFormats = new Set(["int32", "int64", "uri-reference"])

export const documentResolver =
  (document: OpenApiDocument): Resolve =>
  (ref) => {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1]
    const schema = name === undefined ? undefined : document.components.schemas[name]
    if (schema === undefined) throw new Error(`unresolvable $ref ${ref}`)
    return schema
  }

const isObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isSchema = (value: JsonValue | undefined): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const schemaOf = (value: JsonValue | undefined, keyword: string): JsonSchema => {
  if (!isSchema(value)) throw new Error(`${keyword} must hold a schema`)
  return value
}

const numberOf = (value: JsonValue | undefined, keyword: string): number => {
  if (typeof value !== "number") throw new Error(`${keyword} must be a number`)
  return value
}

const arrayOf = (value: JsonValue | undefined, keyword: string): ReadonlyArray<JsonValue> => {
  if (!Array.isArray(value)) throw new Error(`${keyword} must be an array`)
  return value
}

const typeMatches = (type: JsonValue, value: unknown): boolean => {
  switch (type) {
    case "object":
      return isObject(value)
    case "array":
      return Array.isArray(value)
    case "string":
      return typeof value === "string"
    case "integer":
      return typeof value === "number" && Number.isInteger(value)
    case "number":
      return typeof value === "number" && Number.isFinite(value)
    case "boolean":
      return typeof value === "boolean"
    case "null":
      return value === null
    default:
      throw new Error(`unsupported type ${JSON.stringify(type)}`)
  }
}

const entriesOf = (value: object): ReadonlyArray<[string, unknown]> => Object.entries(value)

/** Each way `value` breaks `schema`, prefixed by where; empty when it conforms. */
export const schemaProblems = (
  schema: JsonSchema,
  value: unknown,
  resolve: Resolve,
  at = "$",
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const fail = (message: string) => problems.push(`${at} ${message}`)
  const text = typeof value === "string" ? value : undefined
  const number = typeof value === "number" ? value : undefined

  for (const [keyword, argument] of Object.entries(schema)) {
    if (annotations.has(keyword)) continue
    switch (keyword) {
      case "$ref":
        if (typeof argument !== "string") throw new Error("$ref must be a string")
        problems.push(...schemaProblems(resolve(argument), value, resolve, at))
        break
      case "allOf":
        for (const part of arrayOf(argument, keyword)) {
          problems.push(...schemaProblems(schemaOf(part, keyword), value, resolve, at))
        }
        break
      case "type":
        if (!typeMatches(argument, value)) fail(`is not of type ${String(argument)}`)
        break
      case "enum":
        if (!arrayOf(argument, keyword).some((option) => isDeepStrictEqual(option, value))) {
          fail(`is not one of ${JSON.stringify(argument)}`)
        }
        break
      case "const":
        if (!isDeepStrictEqual(argument, value)) fail(`is not ${JSON.stringify(argument)}`)
        break
      case "required":
        if (isObject(value)) {
          for (const name of arrayOf(argument, keyword)) {
            if (typeof name === "string" && !Object.hasOwn(value, name)) fail(`lacks ${name}`)
          }
        }
        break
      case "properties":
        if (isObject(value)) {
          const properties = schemaOf(argument, keyword)
          for (const [name, field] of entriesOf(value)) {
            const fieldSchema = Object.hasOwn(properties, name) ? properties[name] : undefined
            if (fieldSchema !== undefined) {
              problems.push(
                ...schemaProblems(schemaOf(fieldSchema, name), field, resolve, `${at}.${name}`),
              )
            }
          }
        }
        break
      case "additionalProperties":
        if (isObject(value)) {
          const properties = schema["properties"]
          const defined = (name: string) => isSchema(properties) && Object.hasOwn(properties, name)
          for (const [name, field] of entriesOf(value)) {
            if (defined(name)) continue
            if (argument === false) fail(`has ${name}, which is not allowed`)
            else problems.push(...schemaProblems(schemaOf(argument, keyword), field, resolve, at))
          }
        }
        break
      case "items":
        if (Array.isArray(value)) {
          const items = schemaOf(argument, keyword)
          value.forEach((item: unknown, index) =>
            problems.push(...schemaProblems(items, item, resolve, `${at}[${index}]`)),
          )
        }
        break
      case "minimum":
        if (number !== undefined && number < numberOf(argument, keyword)) fail(`is < ${argument}`)
        break
      case "maximum":
        if (number !== undefined && number > numberOf(argument, keyword)) fail(`is > ${argument}`)
        break
      case "exclusiveMinimum":
        if (number !== undefined && number <= numberOf(argument, keyword)) fail(`is <= ${argument}`)
        break
      case "exclusiveMaximum":
        if (number !== undefined && number >= numberOf(argument, keyword)) fail(`is >= ${argument}`)
        break
      // JSON Schema counts a string's length in code points.
      case "minLength":
        if (text !== undefined && [...text].length < numberOf(argument, keyword)) {
          fail(`is shorter than ${argument}`)
        }
        break
      case "maxLength":
        if (text !== undefined && [...text].length > numberOf(argument, keyword)) {
          fail(`is longer than ${argument}`)
        }
        break
      case "pattern":
        if (typeof argument !== "string") throw new Error("pattern must be a string")
        if (text !== undefined && !new RegExp(argument, "u").test(text)) {
          fail(`does not match ${argument}`)
        }
        break
      case "format":
        if (typeof argument !== "string" || !knownFormats.has(argument)) {
          throw new Error(`unsupported format ${JSON.stringify(argument)}`)
        }
        break
      default:
        throw new Error(`unsupported keyword ${keyword}`)
    }
  }
  return problems
}
