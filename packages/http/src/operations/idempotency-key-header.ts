import { IdempotencyKey } from "@petstore/core"
import { Schema } from "effect"

/**
 * The `Idempotency-Key` header's value: the key as a quoted string, as the IETF draft writes it
 * (`"8e03978e-…"`), or the same text unquoted. The quotes are not part of the key.
 */
export const IdempotencyKeyHeader = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: (value) =>
    value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value,
  encode: (key) => `"${key}"`,
}).pipe(Schema.compose(IdempotencyKey))
