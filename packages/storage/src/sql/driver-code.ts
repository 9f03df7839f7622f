import { SqlError } from "@effect/sql/SqlError"

/** The `code` of the driver error behind an `SqlError` (a SQLSTATE, `SQLITE_BUSY`, …). */
export const driverCode = (error: unknown): unknown =>
  error instanceof SqlError &&
  typeof error.cause === "object" &&
  error.cause !== null &&
  "code" in error.cause
    ? error.cause.code
    : undefined
