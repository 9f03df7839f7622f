import { Option, SchemaAST } from "effect"

/** Writes a value of a schema's type as the JSON text of its encoded form. */
export type JsonEncoder = (value: unknown) => string

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null

const notOfTheSchema = (value: unknown): never => {
  throw new TypeError(`not a value of the schema: ${String(value)}`)
}

/** What encoding leaves values of a schema as: strings, numbers, or any JSON scalar. */
type ScalarKind = "string" | "number" | "scalar"

const sameKind = (kinds: ReadonlyArray<ScalarKind>): ScalarKind =>
  kinds.every((kind) => kind === kinds[0]) ? (kinds[0] ?? "scalar") : "scalar"

const literalKind = (value: unknown): ScalarKind | undefined =>
  typeof value === "string"
    ? "string"
    : typeof value === "number"
      ? "number"
      : typeof value === "boolean" || value === null
        ? "scalar"
        : undefined

/**
 * Whether encoding leaves values of `ast` as they are, each a JSON string, number, boolean or
 * null (then `JSON.stringify` of the value is its text), and which of them; `undefined` if not.
 */
const scalarKind = (ast: SchemaAST.AST): ScalarKind | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "scalar"
    case "Literal":
      return literalKind(ast.literal)
    case "Enums":
      return sameKind(ast.enums.map(([, value]) => literalKind(value) ?? "scalar"))
    case "Refinement":
      return scalarKind(ast.from)
    case "Union": {
      const kinds = ast.types.map(scalarKind)
      return kinds.every((kind) => kind !== undefined) ? sameKind(kinds) : undefined
    }
    default:
      return undefined
  }
}

/**
 * What `JSON.stringify` may escape in a string: `"`, `\`, control characters and lone surrogates
 * (a string with any surrogate is left to it, paired ones included).
 */
const needsEscaping = /[\u0000-\u001f"\\\ud800-\udfff]/

const writers: { readonly [Kind in ScalarKind]: JsonEncoder } = {
  // A string with nothing to escape is itself between quotes, as `JSON.stringify` writes it.
  string: (value) =>
    typeof value === "string" && !needsEscaping.test(value) ? `"${value}"` : JSON.stringify(value),
  // A finite number's JSON is its `toString`; NaN and the infinities are `null`.
  number: (value) =>
    typeof value === "number" && Number.isFinite(value) ? `${value}` : JSON.stringify(value),
  scalar: (value) => JSON.stringify(value),
}

/**
 * A `Schema.Class`: a transformation from its fields to a declaration, both marked with the
 * surrogate annotation that only the class constructors of `effect/Schema` set. Encoding an
 * instance hands it, unchanged, to the encoding of its fields.
 */
const isClass = (ast: SchemaAST.Transformation): boolean =>
  SchemaAST.isDeclaration(ast.to) &&
  SchemaAST.isFinalTransformation(ast.transformation) &&
  Option.isSome(SchemaAST.getSurrogateAnnotation(ast)) &&
  Option.isSome(SchemaAST.getSurrogateAnnotation(ast.to))

/** `0`, `1`, `42`…: names `JSON.stringify` writes before the others, whatever their order. */
const arrayIndex = /^(?:0|[1-9][0-9]*)$/

interface Field {
  readonly name: string
  /** `"name":`, written once. */
  readonly key: string
  readonly isOptional: boolean
  readonly write: JsonEncoder
}

/**
 * A property's type without `undefined`: a property whose value is `undefined` is left out of
 * the text, as `JSON.stringify` leaves it out, so only the other members are ever written.
 */
const withoutUndefined = (ast: SchemaAST.AST): SchemaAST.AST =>
  SchemaAST.isUnion(ast)
    ? SchemaAST.Union.make(ast.types.filter((member) => !SchemaAST.isUndefinedKeyword(member)))
    : ast

const fieldOf = (signature: SchemaAST.PropertySignature): Option.Option<Field> => {
  const { name } = signature
  // `JSON.stringify` moves index-like names first, and `__proto__` is not a plain property.
  if (typeof name !== "string" || arrayIndex.test(name) || name === "__proto__") {
    return Option.none()
  }
  return Option.map(compile(withoutUndefined(signature.type)), (write) => ({
    name,
    key: `${JSON.stringify(name)}:`,
    isOptional: signature.isOptional,
    write,
  }))
}

/**
 * An object's properties in the order the schema declares them, as effect's encoding builds its
 * output: a required one is read whatever, an optional one only when the value has it as its own.
 */
const writeObject =
  (fields: ReadonlyArray<Field>): JsonEncoder =>
  (value) => {
    if (!isRecord(value)) return notOfTheSchema(value)
    let text = ""
    for (const field of fields) {
      if (field.isOptional && !Object.hasOwn(value, field.name)) continue
      const member = value[field.name]
      if (member === undefined) continue
      text += `${text === "" ? "" : ","}${field.key}${field.write(member)}`
    }
    return `{${text}}`
  }

const writeArray =
  (write: JsonEncoder): JsonEncoder =>
  (value) => {
    if (!Array.isArray(value)) return notOfTheSchema(value)
    let text = ""
    for (let index = 0; index < value.length; index++) {
      text += `${index === 0 ? "" : ","}${write(value[index])}`
    }
    return `[${text}]`
  }

/**
 * A class instance's text, written once and kept for as long as the instance lives. An instance
 * of a `Schema.Class` was checked by its constructor and never changes (its fields are
 * readonly), so its text never changes either; a store that hands out the same instances (the
 * in-memory one) then writes a page of pets by joining texts it already has.
 */
const keptPerInstance = (write: JsonEncoder): JsonEncoder => {
  const written = new WeakMap<object, string>()
  return (value) => {
    if (!isRecord(value)) return write(value)
    const kept = written.get(value)
    if (kept !== undefined) return kept
    const text = write(value)
    written.set(value, text)
    return text
  }
}

const compileTypeLiteral = (ast: SchemaAST.TypeLiteral): Option.Option<JsonEncoder> => {
  // Without properties, encoding keeps every property the value has: no text to compile.
  if (ast.indexSignatures.length > 0 || ast.propertySignatures.length === 0) return Option.none()
  return Option.map(Option.all(ast.propertySignatures.map(fieldOf)), writeObject)
}

const compile = (ast: SchemaAST.AST): Option.Option<JsonEncoder> => {
  const kind = scalarKind(ast)
  if (kind !== undefined) return Option.some(writers[kind])
  switch (ast._tag) {
    case "Refinement":
      // A value of the schema's type passed the filter when it was made: encoding checks it
      // again, which changes nothing in the text.
      return compile(ast.from)
    case "TypeLiteral":
      return compileTypeLiteral(ast)
    case "TupleType": {
      const [item, ...others] = ast.rest
      return ast.elements.length === 0 && item !== undefined && others.length === 0
        ? Option.map(compile(item.type), writeArray)
        : Option.none()
    }
    case "Transformation":
      return isClass(ast) ? Option.map(compile(ast.from), keptPerInstance) : Option.none()
    default:
      return Option.none()
  }
}

/**
 * A writer of the JSON text `JSON.stringify(Schema.encodeSync(schema)(value))` gives, compiled
 * from the schema's AST: objects (`Struct`, `Class`) with their properties in declaration order,
 * arrays, and strings, numbers, booleans and literals, refined or in unions. Like
 * fast-json-stringify it trusts its input to be of the schema's type, and does not check it again.
 * `None` for any other shape (transformations other than a class, tuples, records, `bigint`,
 * suspended schemas…): its values are encoded through the schema itself.
 */
export const compileJsonEncoder = (ast: SchemaAST.AST): Option.Option<JsonEncoder> => compile(ast)
