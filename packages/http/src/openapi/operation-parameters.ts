import { Schema } from "effect"
import type { InputSpec, Operation, ParameterDoc } from "../operations/operation.js"
import { structFields } from "../operations/struct-fields.js"

/** A path, query or header parameter as the document lists it. */
export interface DocumentedParameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly description: string
  readonly schema: Schema.Schema.All
}

const parametersIn = (
  where: DocumentedParameter["in"],
  spec: InputSpec<Schema.Schema.AnyNoContext>,
): ReadonlyArray<DocumentedParameter> => {
  const docs: Readonly<Record<string, ParameterDoc>> = spec.parameters
  return structFields(spec.schema).flatMap((field) => {
    const name = String(field.name)
    const doc = docs[name]
    if (doc === undefined) return []
    return [
      {
        name,
        in: where,
        required: where === "path" || !field.isOptional,
        description: doc.description,
        schema: doc.schema ?? Schema.make(field.type),
      },
    ]
  })
}

/** An operation's path parameters, then its query parameters, then the headers it reads. */
export const operationParameters = (operation: Operation): ReadonlyArray<DocumentedParameter> => [
  ...parametersIn("path", operation.params),
  ...parametersIn("query", operation.query),
  ...parametersIn("header", operation.headers),
]
