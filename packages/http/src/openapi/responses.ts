import { errorCatalogue, errorEntry, type ErrorCode } from "../vocabulary/error-catalogue.js"
import { headerRef } from "../vocabulary/headers.js"
import { componentRef } from "./json-schema.js"
import type { Header, JsonSchema, Reference, Response } from "../vocabulary/openapi-types.js"

export type Headers = Readonly<Record<string, Header | Reference>>

export const jsonContent = (schema: JsonSchema) => ({ "application/json": { schema } })

/** Groups codes by the status they are answered with, in ascending status order. */
const byStatus = (
  codes: ReadonlyArray<ErrorCode>,
): ReadonlyMap<number, ReadonlyArray<ErrorCode>> => {
  const groups = new Map<number, Array<ErrorCode>>()
  for (const code of codes) {
    const status = errorCatalogue[code].status
    groups.set(status, [...(groups.get(status) ?? []), code])
  }
  return new Map([...groups].sort(([a], [b]) => a - b))
}

const describe = (codes: ReadonlyArray<ErrorCode>) => {
  const [only, ...others] = codes
  return only !== undefined && others.length === 0
    ? errorCatalogue[only].when
    : codes.map((code) => `\`${code}\`: ${errorCatalogue[code].when}`).join(" ")
}

/** The headers of the answers an operation's own route gives, beyond those of the catalogue. */
export interface OperationHeaders {
  /** On every answer of its route (a deprecated operation's `Deprecation`, `Sunset`, `Link`). */
  readonly route: Headers
  /** On every answer given once its key check admitted the request (`RateLimit`…). */
  readonly admitted: Headers
}

/** One header an answer carries: the response lists its name, schema and whether it is always sent. */
interface Carried {
  /** Headers are listed by where they come from: the request id, the code, the route, the key. */
  readonly layer: number
  readonly name: string
  readonly header: Header | Reference
}

/** What every answer with `code` carries. */
const carriedBy = (code: ErrorCode, operation: OperationHeaders): ReadonlyArray<Carried> => {
  const entry = errorEntry(code)
  const layer = (index: number, headers: Headers) =>
    Object.entries(headers).map(([name, header]) => ({ layer: index, name, header }))
  return [
    ...layer(0, { "X-Request-Id": headerRef("XRequestId") }),
    ...layer(
      1,
      Object.fromEntries(
        Object.entries(entry.headers ?? {}).map(([name, component]) => [
          name,
          headerRef(component),
        ]),
      ),
    ),
    ...(entry.origin === "operation" ? layer(2, operation.route) : []),
    ...(entry.afterAdmission ? layer(3, operation.admitted) : []),
  ]
}

/**
 * The headers of a response that stands for every code in `group`: each one any of them carries,
 * required only when every one of them always carries it.
 */
const headersOf = (
  group: ReadonlyArray<ErrorCode>,
  operation: OperationHeaders,
  components: Readonly<Record<string, Header>>,
): Headers => {
  const carried = group.map((code) => carriedBy(code, operation))
  const optional = (header: Header | Reference): Header | Reference => {
    const shown = "$ref" in header ? components[header.$ref.split("/").pop() ?? ""] : header
    if (shown === undefined) throw new Error(`no header component for ${JSON.stringify(header)}`)
    return shown.required ? { ...shown, required: false } : header
  }
  const headers: Record<string, Header | Reference> = {}
  const layers = [...new Set(carried.flat().map(({ layer }) => layer))].sort((a, b) => a - b)
  for (const layer of layers) {
    for (const { name, header } of carried.flat().filter((entry) => entry.layer === layer)) {
      if (name in headers) continue
      const always = carried.every((headers) => headers.some((entry) => entry.name === name))
      headers[name] = always ? header : optional(header)
    }
  }
  return headers
}

/**
 * The Error responses for `codes`, one per status: the codes it may carry, what each means, and
 * the headers its answers carry (`components` shows those referred to).
 */
export const errorResponses = (
  codes: ReadonlyArray<ErrorCode>,
  operation: OperationHeaders,
  components: Readonly<Record<string, Header>>,
): Readonly<Record<string, Response>> =>
  Object.fromEntries(
    [...byStatus(codes)].map(([status, group]) => {
      const headers = headersOf(group, operation, components)
      const response: Response = {
        description: describe(group),
        ...(Object.keys(headers).length > 0 ? { headers } : {}),
        content: jsonContent({
          allOf: [
            componentRef("Error"),
            {
              properties: {
                code: { type: "string", enum: [...group] },
                status: { type: "integer", const: status },
              },
            },
          ],
        }),
      }
      return [String(status), response]
    }),
  )
