import assert from "node:assert/strict"
import type { JsonSchema, OpenApiDocument } from "../../src/index.js"
import type {
  DocumentedMethod,
  Header,
  Operation,
  Reference,
} from "../../src/vocabulary/openapi-types.js"
import { documentResolver, schemaChecker, type Resolve } from "./json-schema-check.js"

/** A request as the contract tests build it: a path under the base path, exactly these headers. */
export interface ContractRequest {
  readonly method: string
  /** Already percent-encoded, with its query string. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
}

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

export interface DocumentedOperation {
  /** The path template, as the document names it (`/pets/{petId}`). */
  readonly path: string
  readonly method: DocumentedMethod
  readonly operation: Operation
}

export const operationsOf = (document: OpenApiDocument): ReadonlyArray<DocumentedOperation> =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    (["get", "post"] as const).flatMap((method) => {
      const operation = item[method]
      return operation === undefined ? [] : [{ path, method, operation }]
    }),
  )

const isReference = (header: Header | Reference): header is Reference => "$ref" in header

/**
 * Checks answers against the document: the status is one the operation documents, and the
 * content type, the body and every header are what that response documents.
 */
export const contractOf = (document: OpenApiDocument) => {
  const resolve: Resolve = documentResolver(document)
  const { problems } = schemaChecker(resolve)

  const headerOf = (header: Header | Reference): Header => {
    if (!isReference(header)) return header
    const name = /^#\/components\/headers\/(.+)$/.exec(header.$ref)?.[1]
    const resolved = name === undefined ? undefined : document.components.headers[name]
    if (resolved === undefined) throw new Error(`unresolvable $ref ${header.$ref}`)
    return resolved
  }

  const headerProblems = (schema: JsonSchema, value: string) =>
    schema["type"] === "integer"
      ? /^[0-9]+$/.test(value)
        ? problems(schema, Number(value))
        : [`${JSON.stringify(value)} is not an integer`]
      : problems(schema, value)

  /**
   * Asserts `response` is documented for `operation` and returns it read. A 5xx fails unless
   * `serverErrors` expects one (documented as it must be all the same).
   */
  const check = async (
    { operation }: DocumentedOperation,
    request: ContractRequest,
    response: Response,
    serverErrors: "refused" | "expected" = "refused",
  ): Promise<Answer> => {
    const text = await response.text()
    const context = `${request.method} ${request.path} → ${response.status} ${text.slice(0, 300)}`
    assert.ok(serverErrors === "expected" || response.status < 500, `a server error: ${context}`)
    const documented = operation.responses[String(response.status)]
    assert.ok(documented, `${operation.operationId} does not document ${context}`)

    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const { required, schema } = headerOf(header)
      const value = response.headers.get(name)
      if (value === null) {
        assert.ok(!required, `${name} is missing: ${context}`)
        continue
      }
      assert.deepEqual(headerProblems(schema, value), [], `${name}: ${value}: ${context}`)
    }

    const media = Object.entries(documented.content ?? {})
    if (media.length === 0)
      return { status: response.status, headers: response.headers, body: text }
    const contentType = response.headers.get("content-type")?.split(";")[0]?.trim()
    const schema = media.find(([type]) => type === contentType)?.[1].schema
    assert.ok(schema, `content type ${contentType} is not documented: ${context}`)
    const body: unknown = JSON.parse(text)
    assert.deepEqual(problems(schema, body), [], context)
    return { status: response.status, headers: response.headers, body }
  }

  return { resolve, check }
}

export type Contract = ReturnType<typeof contractOf>
