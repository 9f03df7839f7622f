import { JSONSchema, type Schema } from "effect"
import type { JsonObject, JsonSchema, JsonValue } from "../vocabulary/openapi-types.js"

const componentPath = "#/components/schemas/"

const toJson = (value: unknown): JsonValue => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value
  if (typeof value === "number" && Number.isFinite(value)) return value
  if (Array.isArray(value)) return value.map(toJson)
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, field]) => field !== undefined)
        .map(([key, field]) => [key, toJson(field)]),
    )
  }
  throw new TypeError(`not JSON: ${String(value)}`)
}

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const asSchema = (value: JsonValue): JsonSchema => {
  if (!isObject(value)) throw new TypeError(`not a JSON Schema: ${JSON.stringify(value)}`)
  return value
}

const numberOr = (value: JsonValue | undefined, fallback: number) =>
  typeof value === "number" ? value : fallback

const int32 = { min: -(2 ** 31), max: 2 ** 31 - 1 }

/**
 * `Schema.Int` refuses integers beyond ±(2^53 − 1), but effect's JSON Schema only says
 * `integer`: the bounds it enforces are written out here, with the format they fit in.
 */
const withIntegerBounds = (schema: JsonSchema): JsonSchema => {
  const { exclusiveMinimum, exclusiveMaximum, minimum, maximum, ...rest } = schema
  const lowest = Math.max(
    -Number.MAX_SAFE_INTEGER,
    numberOr(minimum, -Infinity),
    numberOr(exclusiveMinimum, -Infinity) + 1,
  )
  const highest = Math.min(
    Number.MAX_SAFE_INTEGER,
    numberOr(maximum, Infinity),
    numberOr(exclusiveMaximum, Infinity) - 1,
  )
  const format = lowest >= int32.min && highest <= int32.max ? "int32" : "int64"
  return { ...rest, format, minimum: lowest, maximum: highest }
}

const mapSchemas = (record: JsonValue, f: (schema: JsonSchema) => JsonSchema): JsonObject =>
  Object.fromEntries(
    Object.entries(asSchema(record)).map(([key, value]) => [key, f(asSchema(value))]),
  )

/** Tidies effect's output for readers and generators, keeping what it accepts unchanged. */
const normalize = (schema: JsonSchema): JsonSchema => {
  // effect titles a refinement after its filter ("positive", "int"), which renderers would show
  // as the schema's name; and `additionalProperties: true` is the default, whose explicit form
  // would open the generated client's types to any property.
  const { title: _title, additionalProperties, properties, items, allOf, ...rest } = schema
  const normalized: JsonSchema = {
    ...rest,
    ...(properties === undefined ? {} : { properties: mapSchemas(properties, normalize) }),
    ...(items === undefined ? {} : { items: normalize(asSchema(items)) }),
    ...(Array.isArray(allOf) ? { allOf: allOf.map((part) => normalize(asSchema(part))) } : {}),
    ...(additionalProperties === undefined || additionalProperties === true
      ? {}
      : { additionalProperties }),
  }
  return normalized["type"] === "integer" ? withIntegerBounds(normalized) : normalized
}

/** What the server does with properties of a request body that its schema does not define. */
export type ExcessProperties = "refused" | "ignored"

export interface ComponentSchemas {
  /**
   * The JSON Schema of `schema`, with each part that has an `identifier` placed under
   * `components.schemas` and referenced from here.
   */
  readonly of: (
    schema: Schema.Schema.All,
    options?: { readonly excessProperties?: ExcessProperties },
  ) => JsonSchema
  /** Every component the schemas given to `of` so far refer to, by name. */
  readonly components: () => Readonly<Record<string, JsonSchema>>
}

/** Collects the JSON Schemas of effect schemas as one document's shared components. */
export const componentSchemas = (): ComponentSchemas => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  return {
    of: (schema, options = {}) =>
      normalize(
        asSchema(
          toJson(
            JSONSchema.fromAST(schema.ast, {
              definitions,
              definitionPath: componentPath,
              target: "openApi3.1",
              additionalPropertiesStrategy:
                options.excessProperties === "ignored" ? "allow" : "strict",
            }),
          ),
        ),
      ),
    components: () =>
      Object.fromEntries(
        Object.entries(definitions)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([name, definition]) => [name, normalize(asSchema(toJson(definition)))]),
      ),
  }
}

/** A `$ref` to the component named `name`. */
export const componentRef = (name: string): JsonSchema => ({ $ref: `${componentPath}${name}` })
