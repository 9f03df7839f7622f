import { SchemaAST, type Schema } from "effect"

/**
 * The fields of a struct schema as its encoded side has them (the names a URL or a request's
 * headers carry, and whether each must be present); none for a schema that is not a struct.
 */
export const structFields = (
  schema: Schema.Schema.All,
): ReadonlyArray<SchemaAST.PropertySignature> => {
  const encoded = SchemaAST.encodedAST(schema.ast)
  return SchemaAST.isTypeLiteral(encoded) ? encoded.propertySignatures : []
}
