import { Either, Option, SchemaAST, type Effect } from "effect"

/** What a compiled decoder answers for input it does not take: the schema's decoder decides. */
export const notPlain: unique symbol = Symbol("notPlain")

/** Decodes input the way the schema does, or answers `notPlain`. */
export type PlainDecoder = (input: unknown) => unknown

/** As the request decoders decode: properties a schema does not name are dropped. */
const parseOptions: SchemaAST.ParseOptions = { onExcessProperty: "ignore" }

/** Whether input passes a schema whose decoding, when it succeeds, gives the input itself. */
type Test = (input: unknown) => boolean

const isRecord = (input: unknown): input is Readonly<Record<PropertyKey, unknown>> =>
  typeof input === "object" && input !== null && !Array.isArray(input)

/** The value of a parse that answered at once and succeeded; `notPlain` for anything else. */
const settled = (result: Effect.Effect<unknown, unknown, unknown>): unknown =>
  Either.isEither(result) && Either.isRight(result) ? result.right : notPlain

const testOf = (ast: SchemaAST.AST): Option.Option<Test> => {
  switch (ast._tag) {
    case "StringKeyword":
      return Option.some((input) => typeof input === "string")
    case "NumberKeyword":
      return Option.some((input) => typeof input === "number")
    case "BooleanKeyword":
      return Option.some((input) => typeof input === "boolean")
    case "UndefinedKeyword":
      return Option.some((input) => input === undefined)
    case "Literal": {
      const { literal } = ast
      return Option.some((input) => input === literal)
    }
    case "Enums": {
      const values = ast.enums.map(([, value]) => value)
      return Option.some((input) => values.some((value) => value === input))
    }
    case "Union":
      return Option.map(
        Option.all(ast.types.map(testOf)),
        (tests) => (input) => tests.some((test) => test(input)),
      )
    case "Refinement":
      // The schema's own filter, as its decoder runs it: a refinement is exact whatever it checks.
      return Option.map(
        testOf(ast.from),
        (test) => (input) => test(input) && Option.isNone(ast.filter(input, parseOptions, ast)),
      )
    case "TypeLiteral":
      // `Struct({})`: anything but null and undefined, kept as it is.
      return ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0
        ? Option.some((input) => input !== null && input !== undefined)
        : Option.none()
    default:
      return Option.none()
  }
}

interface Property {
  readonly name: PropertyKey
  readonly isOptional: boolean
  readonly decode: PlainDecoder
}

const propertyOf = (signature: SchemaAST.PropertySignature): Option.Option<Property> =>
  Option.map(compile(signature.type), (decode) => ({
    name: signature.name,
    isOptional: signature.isOptional,
    decode,
  }))

/**
 * An object with the schema's properties, in the order it declares them; others are dropped.
 * A required property the input lacks (which the schema may still read from its prototype) is
 * left to the schema.
 */
const decodeObject =
  (properties: ReadonlyArray<Property>): PlainDecoder =>
  (input) => {
    if (!isRecord(input)) return notPlain
    const output: Record<PropertyKey, unknown> = {}
    for (const property of properties) {
      if (!Object.hasOwn(input, property.name)) {
        if (property.isOptional) continue
        return notPlain
      }
      const value = property.decode(input[property.name])
      if (value === notPlain) return notPlain
      output[property.name] = value
    }
    return output
  }

const decodeArray =
  (decode: PlainDecoder): PlainDecoder =>
  (input) => {
    if (!Array.isArray(input)) return notPlain
    const output: Array<unknown> = []
    for (const item of input) {
      const value = decode(item)
      if (value === notPlain) return notPlain
      output.push(value)
    }
    return output
  }

const compileTransformation = (ast: SchemaAST.Transformation): Option.Option<PlainDecoder> => {
  const { transformation } = ast
  // A struct whose properties are renamed or defaulted transforms them one by one: not compiled.
  if (SchemaAST.isTypeLiteralTransformation(transformation)) return Option.none()
  const transform = SchemaAST.isFinalTransformation(transformation)
    ? (value: unknown, input: unknown) =>
        settled(transformation.decode(value, parseOptions, ast, input))
    : (value: unknown) => value
  return Option.flatMap(compile(ast.from), (from) =>
    Option.map(compile(ast.to), (to) => (input: unknown) => {
      const value = from(input)
      if (value === notPlain) return notPlain
      const transformed = transform(value, input)
      return transformed === notPlain ? notPlain : to(transformed)
    }),
  )
}

const compile = (ast: SchemaAST.AST): Option.Option<PlainDecoder> => {
  const test = testOf(ast)
  if (Option.isSome(test)) {
    const passes = test.value
    return Option.some((input) => (passes(input) ? input : notPlain))
  }
  switch (ast._tag) {
    case "Refinement":
      return Option.map(compile(ast.from), (from) => (input) => {
        const value = from(input)
        return value === notPlain || Option.isSome(ast.filter(value, parseOptions, ast))
          ? notPlain
          : value
      })
    case "TypeLiteral":
      return ast.indexSignatures.length > 0
        ? Option.none()
        : Option.map(Option.all(ast.propertySignatures.map(propertyOf)), decodeObject)
    case "TupleType": {
      const [item, ...others] = ast.rest
      return ast.elements.length === 0 && item !== undefined && others.length === 0
        ? Option.map(compile(item.type), decodeArray)
        : Option.none()
    }
    case "Transformation":
      return compileTransformation(ast)
    case "Declaration": {
      // A class's own check (`instanceof`), run as its decoder runs it.
      const parse = ast.decodeUnknown(...ast.typeParameters)
      return Option.some((input) => settled(parse(input, parseOptions, ast)))
    }
    default:
      return Option.none()
  }
}

/**
 * A decoder compiled from the schema's AST for input that is plainly valid: it gives exactly what
 * `Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })` gives, building the same
 * objects and running the schema's own filters, transformations and class constructors, without
 * the parser's bookkeeping (issues, options, effects). For any input it does not take it answers
 * `notPlain`, and the schema then decodes it (and says why it is refused). `None` for shapes it
 * does not know (records, tuples, property renames and defaults, suspended schemas…).
 */
export const compilePlainDecoder = (ast: SchemaAST.AST): Option.Option<PlainDecoder> => compile(ast)
