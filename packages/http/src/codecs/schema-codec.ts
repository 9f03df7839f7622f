import { Option, Schema, type SchemaAST } from "effect"
import { compileJsonEncoder, type JsonEncoder } from "./json-encoder.js"
import { compilePlainDecoder, notPlain, type PlainDecoder } from "./plain-decoder.js"

/** One schema's JSON writer and fast reader. */
export interface SchemaCodec<A> {
  /** The value as JSON text: exactly `JSON.stringify(Schema.encodeSync(schema)(value))`. */
  readonly encodeJson: (value: A) => string
  /**
   * What `Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })` gives for input it
   * takes plainly; `undefined` for any other input, which the schema must then decode.
   */
  readonly decodePlain: (input: unknown) => A | undefined
  /** Which halves were compiled; the others go through the schema itself. */
  readonly compiled: { readonly encoder: boolean; readonly decoder: boolean }
}

interface Compiled {
  readonly encoder: Option.Option<JsonEncoder>
  readonly decoder: Option.Option<PlainDecoder>
}

// Every use of a schema shares what was compiled from it.
const compiledByAst = new WeakMap<SchemaAST.AST, Compiled>()

const compiledFor = (ast: SchemaAST.AST): Compiled => {
  const known = compiledByAst.get(ast)
  if (known !== undefined) return known
  const compiled = { encoder: compileJsonEncoder(ast), decoder: compilePlainDecoder(ast) }
  compiledByAst.set(ast, compiled)
  return compiled
}

const decodesNothingPlainly = (): undefined => undefined

/**
 * The codec of a schema, compiled from its AST once (in the spirit of fast-json-stringify), each
 * half falling back to the schema for a shape the compilers do not know: never wrong, at worst no
 * faster. A property test holds both halves to the schema.
 */
export const schemaCodec = <A, I>(schema: Schema.Schema<A, I>): SchemaCodec<A> => {
  const { encoder, decoder } = compiledFor(schema.ast)
  return {
    encodeJson: Option.getOrElse(encoder, () => {
      const encode = Schema.encodeSync(schema)
      return (value: A) => JSON.stringify(encode(value))
    }),
    decodePlain: Option.match(decoder, {
      onNone: () => decodesNothingPlainly,
      onSome: (decode) => (input: unknown) => {
        const value = decode(input)
        // The decoder walks the schema's AST, where types are gone: what it built is an `A` because
        // it ran the schema's own checks and constructors (and the property test holds it to that).
        return value === notPlain ? undefined : (value as A)
      },
    }),
    compiled: { encoder: Option.isSome(encoder), decoder: Option.isSome(decoder) },
  }
}
