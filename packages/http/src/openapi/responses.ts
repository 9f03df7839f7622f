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

/**
 * The Error responses for `codes`, one per status: the codes it may carry, what each means,
 * and the headers the catalogue gives them; `extraHeaders` for those an operation adds to the
 * responses its own route answers, and `admittedHeaders` for those it adds once a key is admitted.
 */
export const errorResponses = (
  codes: ReadonlyArray<ErrorCode>,
  extraHeaders: Headers,
  admittedHeaders: Headers,
): Readonly<Record<string, Response>> =>
  Object.fromEntries(
    [...byStatus(codes)].map(([status, group]) => {
      const headers: Record<string, Header | Reference> = {
        "X-Request-Id": headerRef("XRequestId"),
      }
      for (const code of group) {
        for (const [name, component] of Object.entries(errorEntry(code).headers ?? {})) {
          headers[name] = headerRef(component)
        }
      }
      const fromOperation = group.every((code) => errorCatalogue[code].origin === "operation")
      // A 401 is answered before a key is admitted, so nothing about the key's limit is on it.
      const afterAdmission = fromOperation && !group.includes("unauthorized")
      const allHeaders = {
        ...headers,
        ...(fromOperation ? extraHeaders : {}),
        ...(afterAdmission ? admittedHeaders : {}),
      }
      const response: Response = {
        description: describe(group),
        ...(Object.keys(allHeaders).length > 0 ? { headers: allHeaders } : {}),
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
