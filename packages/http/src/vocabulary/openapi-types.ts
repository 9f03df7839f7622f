/** The parts of OpenAPI 3.1 this service's document uses. */

export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | JsonObject

export interface JsonObject {
  readonly [key: string]: JsonValue
}

/** A JSON Schema (draft 2020-12, OpenAPI 3.1's dialect). */
export type JsonSchema = JsonObject

export interface Reference {
  readonly $ref: string
}

/** A base URL of the API, ending in its version segment (`…/v1`). */
export interface ApiServer {
  readonly url: string
  readonly description: string
}

export interface Header {
  readonly description: string
  /** Whether every response it is listed on carries it. */
  readonly required: boolean
  readonly schema: JsonSchema
}

export interface MediaType {
  readonly schema: JsonSchema
}

export interface Response {
  readonly description: string
  readonly headers?: Readonly<Record<string, Header | Reference>>
  readonly content?: Readonly<Record<string, MediaType>>
}

export interface Parameter {
  readonly name: string
  readonly in: "query" | "path" | "header"
  readonly required: boolean
  readonly description: string
  readonly schema: JsonSchema
}

export interface RequestBody {
  readonly description: string
  readonly required: boolean
  readonly content: Readonly<Record<string, MediaType>>
}

export interface Operation {
  readonly operationId: string
  readonly summary: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly deprecated?: boolean
  /** When a deprecated operation will be removed (ISO 8601 date), as its `Sunset` header says. */
  readonly "x-sunset"?: string
  readonly security: ReadonlyArray<Readonly<Record<string, ReadonlyArray<string>>>>
  readonly parameters?: ReadonlyArray<Parameter>
  readonly requestBody?: RequestBody
  readonly responses: Readonly<Record<string, Response>>
}

/** The methods an operation may be declared with; `HEAD` comes with `GET`, `OPTIONS` with every path. */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** The methods the document describes, as OpenAPI keys them. */
export type DocumentedMethod = Lowercase<HttpMethod>

export type PathItem = Readonly<Partial<Record<DocumentedMethod, Operation>>>

export interface SecurityScheme {
  readonly type: "http"
  readonly scheme: "bearer"
  readonly description: string
}

export interface OpenApiDocument {
  readonly openapi: "3.1.0"
  readonly info: {
    readonly title: string
    readonly version: string
    readonly description: string
  }
  readonly servers: ReadonlyArray<ApiServer>
  readonly tags: ReadonlyArray<Tag>
  readonly paths: Readonly<Record<string, PathItem>>
  readonly components: {
    readonly schemas: Readonly<Record<string, JsonSchema>>
    readonly headers: Readonly<Record<string, Header>>
    readonly securitySchemes: Readonly<Record<string, SecurityScheme>>
  }
}

/** A tag of operations, as the document lists it. */
export interface Tag {
  readonly name: string
  readonly description?: string
}
