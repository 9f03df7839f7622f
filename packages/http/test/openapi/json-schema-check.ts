import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import type { JsonSchema, JsonValue, OpenApiDocument } from "../../src/index.js"

/**
 * Checks values against the OpenAPI document's schemas with Ajv's JSON Schema 2020-12 validator.
 * Strict mode stays on, so a keyword or format Ajv does not know is an error rather than
 * ignored: a schema the checker cannot judge never passes by default.
 */

export type Resolve = (ref: string) => JsonSchema

export interface SchemaChecker {
  /** The schema a `#/components/schemas/…` ref names. */
  readonly resolve: Resolve
  /** Each way `value` breaks `schema`, as `#/json/pointer message {params}`; empty when it conforms. */
  readonly problems: (schema: JsonSchema, value: unknown) => ReadonlyArray<string>
}

export const documentResolver =
  (document: OpenApiDocument): Resolve =>
  (ref) => {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1]
    const schema = name === undefined ? undefined : document.components.schemas[name]
    if (schema === undefined) throw new Error(`unresolvable $ref ${ref}`)
    return schema
  }

// RFC 3986's characters, and percent-encoded octets.
const uriReference = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/

const newAjv = () =>
  // strictTypes would refuse valid JSON Schema the document uses: an Error response narrows
  // `code` with `allOf: [Error, { properties: { code: … } }]`, a part with no `type` of its own.
  new Ajv2020({ strict: true, strictTypes: false, allErrors: true })
    .addFormat("int32", {
      type: "number",
      validate: (n) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31,
    })
    .addFormat("int64", {
      type: "number",
      validate: (n) => Number.isInteger(n) && n >= -(2 ** 63) && n < 2 ** 63,
    })
    .addFormat("uri-reference", { type: "string", validate: (text) => uriReference.test(text) })

/** Keywords whose values are data, not schemas: a `$ref` inside them is not a reference. */
const dataKeywords = new Set(["const", "enum", "default", "examples"])

const refsIn = (value: JsonValue): ReadonlyArray<string> => {
  if (Array.isArray(value)) return value.flatMap(refsIn)
  if (typeof value !== "object" || value === null) return []
  return Object.entries(value).flatMap(([keyword, argument]) =>
    keyword === "$ref" && typeof argument === "string"
      ? [argument]
      : dataKeywords.has(keyword)
        ? []
        : refsIn(argument),
  )
}

const describe = ({ instancePath, message, params }: ErrorObject): string =>
  `#${instancePath} ${message ?? "is invalid"} ${JSON.stringify(params)}`

const makeChecker = (resolve: Resolve): SchemaChecker => {
  const ajv = newAjv()
  // Each component is registered under the very ref that names it, so Ajv resolves
  // `#/components/schemas/Name` from any schema without the refs being rewritten.
  const registered = new Set<string>()
  const register = (schema: JsonSchema) => {
    for (const ref of refsIn(schema)) {
      if (registered.has(ref)) continue
      registered.add(ref)
      const component = resolve(ref)
      ajv.addSchema(component, ref)
      register(component)
    }
  }

  const compiled = new Map<string, ValidateFunction>()
  const validatorOf = (schema: JsonSchema): ValidateFunction => {
    const key = JSON.stringify(schema)
    const known = compiled.get(key)
    if (known !== undefined) return known
    register(schema)
    const validate = ajv.compile(schema)
    compiled.set(key, validate)
    return validate
  }

  return {
    resolve,
    problems: (schema, value) => {
      const validate = validatorOf(schema)
      return validate(value) ? [] : (validate.errors ?? []).map(describe)
    },
  }
}

const checkers = new WeakMap<Resolve, SchemaChecker>()

/** The checker for schemas whose refs `resolve` resolves; one per resolver, so each schema compiles once. */
export const schemaChecker = (resolve: Resolve): SchemaChecker => {
  const known = checkers.get(resolve)
  if (known !== undefined) return known
  const checker = makeChecker(resolve)
  checkers.set(resolve, checker)
  return checker
}
