import type { Schema } from "effect"
import { domainErrorCode } from "../operations/domain-errors.js"
import type { Operation } from "../operations/operation.js"
import { structFields } from "../operations/struct-fields.js"
import { errorCatalogue, errorCodes, type ErrorCode } from "../vocabulary/error-catalogue.js"

const bodyErrors: ReadonlyArray<ErrorCode> = [
  "invalid_json",
  "invalid_body",
  "payload_too_large",
  "unsupported_media_type",
]

/** Node's own refusals: any request can meet them before it reaches a route. */
const nodeRefusals: ReadonlyArray<ErrorCode> = errorCodes.filter(
  (code) => errorCatalogue[code].origin === "node",
)

const hasFields = (schema: Schema.Schema.All) => structFields(schema).length > 0

/**
 * Every error code an operation can answer with, in the catalogue's order: those its
 * declaration implies (the key check, each input it decodes, its domain failures), the router's
 * 405 for another method on its path, Node's own refusals, and the 500 of a bug.
 */
export const operationErrors = (operation: Operation): ReadonlyArray<ErrorCode> => {
  const codes = new Set<ErrorCode>([
    ...(operation.requiresKey ? (["unauthorized", "rate_limited"] as const) : []),
    ...(hasFields(operation.params.schema) ? (["invalid_path_parameter"] as const) : []),
    ...(hasFields(operation.query.schema) ? (["invalid_query"] as const) : []),
    ...(hasFields(operation.headers.schema) ? [operation.headers.invalid] : []),
    ...(operation.body.read ? bodyErrors : []),
    ...operation.failures.map(domainErrorCode),
    "method_not_allowed",
    ...nodeRefusals,
    "internal_error",
  ])
  return errorCodes.filter((code) => codes.has(code))
}
