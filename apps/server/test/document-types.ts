import type { OpenApiDocument } from "@petstore/http"

/** The parts of the OpenAPI document the tests read, as `OpenApiDocument` types them. */
export type PathItem = OpenApiDocument["paths"][string]

/** The methods the document describes. */
export type DocumentedMethod = keyof PathItem

export type Operation = NonNullable<PathItem[DocumentedMethod]>

export type Response = Operation["responses"][string]

export type Header = OpenApiDocument["components"]["headers"][string]

/** A `$ref` where a header, or anything else, could be written inline. */
export type Reference = Exclude<NonNullable<Response["headers"]>[string], Header>
