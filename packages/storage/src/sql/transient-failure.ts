import { StorageUnavailable } from "@petstore/core"
import { Effect } from "effect"
import { isFrozenRefusal } from "./frozen-refusal.js"

/**
 * PostgreSQL SQLSTATEs a retry may cure: the connection or the server's resources, a
 * conflict with another transaction, or a timeout this service set.
 */
const transientSqlStates = new Set([
  "25P03", // idle_in_transaction_session_timeout
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available (lock_timeout)
  "57014", // query_canceled (statement_timeout)
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "57P05", // idle_session_timeout
  "58030", // io_error
])
const transientSqlStateClasses = new Set([
  "08", // connection exception
  "53", // insufficient resources: disk full, out of memory, too many connections
])

/** SQLite primary result codes a retry may cure: the file busy, locked, unreadable or full. */
const transientSqliteCodes = new Set(["BUSY", "LOCKED", "IOERR", "FULL", "CANTOPEN", "NOMEM"])

/** Node's socket and name-resolution failures. */
const transientSystemCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
])

// node-postgres, pg-pool and @effect/sql-pg report a lost or timed-out connection without a
// code. A connection the server refuses, for whatever reason (the database not accepting
// connections, too many clients, a password changed), leaves the store out of reach: @effect/sql-pg
// says "Failed to acquire connection" around the server's error.
const transientMessage =
  /connection terminated|connection timed out|timeout exceeded when trying to connect|not queryable|connection error|failed to acquire connection/i

const isTransientCode = (code: string): boolean => {
  const sqlite = /^SQLITE_([A-Z]+)/.exec(code)
  if (sqlite?.[1] !== undefined) return transientSqliteCodes.has(sqlite[1])
  if (/^[0-9A-Z]{5}$/.test(code)) {
    return transientSqlStates.has(code) || transientSqlStateClasses.has(code.slice(0, 2))
  }
  return transientSystemCodes.has(code)
}

const codeOf = (error: object): string | undefined =>
  "code" in error && typeof error.code === "string" ? error.code : undefined

/**
 * Whether a driver failure may pass if the operation is tried again: the store unreachable,
 * busy, out of resources, timed out or frozen. Anything else (a constraint violated, a value refused,
 * a syntax error) is a bug or broken data that no retry fixes. Looks through `cause` chains
 * (an `SqlError` wraps the driver's error) and the errors of an `AggregateError`.
 */
export const isTransient = (error: unknown, seen: Set<unknown> = new Set()): boolean => {
  if (typeof error !== "object" || error === null || seen.has(error)) return false
  seen.add(error)
  // A frozen store refuses writes until it is thawed, or the clients are moved to its successor.
  if (isFrozenRefusal(error)) return true
  const code = codeOf(error)
  // A code is the driver's verdict: a constraint violation on a lost connection is still one.
  if (code !== undefined) return isTransientCode(code)
  if (error instanceof AggregateError && error.errors.some((inner) => isTransient(inner, seen))) {
    return true
  }
  if (error instanceof Error && transientMessage.test(error.message)) return true
  return "cause" in error && isTransient(error.cause, seen)
}

/**
 * A driver failure as the repository reports it: `StorageUnavailable` when a retry may help,
 * otherwise a defect (the edge answers 500 and logs it).
 */
export const unavailableOrDefect = (error: unknown): Effect.Effect<never, StorageUnavailable> =>
  isTransient(error) ? Effect.fail(new StorageUnavailable({ cause: error })) : Effect.die(error)
