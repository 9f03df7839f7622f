import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option } from "effect"
import { isTransient, unavailableOrDefect } from "../src/sql/transient-failure.js"

/** A driver error as node-postgres, better-sqlite3 or Node's sockets make it. */
const driverError = (message: string, code?: string) =>
  Object.assign(new Error(message), code === undefined ? {} : { code })

/** As @effect/sql hands it over: the driver's error is the `cause`. */
const wrapped = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

/** As @effect/sql-pg reports a connection the server refused. */
const refusedConnection = (cause: unknown) =>
  new SqlError({ cause, message: "Failed to acquire connection" })

const transient: ReadonlyArray<readonly [string, unknown]> = [
  ["connection refused", driverError("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED")],
  ["connection reset", driverError("read ECONNRESET", "ECONNRESET")],
  ["name not resolved", driverError("getaddrinfo EAI_AGAIN db", "EAI_AGAIN")],
  ["connection lost", driverError("Connection terminated unexpectedly")],
  ["pool timeout", driverError("timeout exceeded when trying to connect")],
  ["connect timeout", driverError("Connection terminated due to connection timeout")],
  ["client broken", driverError("Client has encountered a connection error and is not queryable")],
  [
    "every address refused",
    new AggregateError([driverError("connect ECONNREFUSED ::1:5432", "ECONNREFUSED")], "failed"),
  ],
  ["08006 connection_failure", driverError("connection failure", "08006")],
  ["08P01 protocol_violation", driverError("protocol violation", "08P01")],
  ["57P01 admin_shutdown", driverError("terminating connection", "57P01")],
  ["57P02 crash_shutdown", driverError("crash", "57P02")],
  ["57P03 cannot_connect_now", driverError("the database system is starting up", "57P03")],
  ["53100 disk_full", driverError("could not extend file", "53100")],
  ["53200 out_of_memory", driverError("out of memory", "53200")],
  ["53300 too_many_connections", driverError("too many clients", "53300")],
  ["40001 serialization_failure", driverError("could not serialize", "40001")],
  ["40P01 deadlock_detected", driverError("deadlock detected", "40P01")],
  ["55P03 lock_not_available", driverError("canceling statement due to lock timeout", "55P03")],
  ["57014 query_canceled", driverError("canceling statement due to statement timeout", "57014")],
  ["SQLITE_BUSY", driverError("database is locked", "SQLITE_BUSY")],
  ["SQLITE_BUSY_SNAPSHOT", driverError("database is locked", "SQLITE_BUSY_SNAPSHOT")],
  ["SQLITE_LOCKED", driverError("database table is locked", "SQLITE_LOCKED")],
  ["SQLITE_IOERR_FSYNC", driverError("disk I/O error", "SQLITE_IOERR_FSYNC")],
  ["SQLITE_FULL", driverError("database or disk is full", "SQLITE_FULL")],
  ["SQLITE_CANTOPEN", driverError("unable to open database file", "SQLITE_CANTOPEN")],
]

const permanent: ReadonlyArray<readonly [string, unknown]> = [
  ["2200H sequence_generator_limit_exceeded", driverError("reached maximum value", "2200H")],
  ["23514 check_violation", driverError("violates check constraint", "23514")],
  ["23505 unique_violation", driverError("duplicate key value", "23505")],
  ["22P02 invalid_text_representation", driverError("invalid input syntax", "22P02")],
  ["42601 syntax_error", driverError("syntax error at or near", "42601")],
  ["42P01 undefined_table", driverError('relation "pets" does not exist', "42P01")],
  ["57P04 database_dropped", driverError("database dropped", "57P04")],
  ["SQLITE_CONSTRAINT_CHECK", driverError("CHECK constraint failed", "SQLITE_CONSTRAINT_CHECK")],
  ["SQLITE_ERROR", driverError("no such table: pets", "SQLITE_ERROR")],
  ["SQLITE_CORRUPT", driverError("database disk image is malformed", "SQLITE_CORRUPT")],
  ["SQLITE_MISMATCH", driverError("datatype mismatch", "SQLITE_MISMATCH")],
  ["a closed SQLite handle", new TypeError("The database connection is not open")],
  ["a pool used after end", driverError("Cannot use a pool after calling end on the pool")],
  ["no cause at all", undefined],
]

describe("storage failure classification", () => {
  for (const [name, cause] of transient) {
    it(`${name} is transient: StorageUnavailable, the driver error kept as its cause`, () => {
      const error = wrapped(cause)
      assert.equal(isTransient(error), true)
      const exit = Effect.runSyncExit(unavailableOrDefect(error))
      assert.ok(Exit.isFailure(exit))
      const failure = Cause.failureOption(exit.cause)
      assert.equal(Option.getOrThrow(failure)._tag, "StorageUnavailable")
      assert.equal(Option.getOrThrow(failure).cause, error)
    })
  }

  for (const [name, cause] of permanent) {
    it(`${name} is not transient: a defect carrying the error`, () => {
      const error = wrapped(cause)
      assert.equal(isTransient(error), false)
      const exit = Effect.runSyncExit(unavailableOrDefect(error))
      assert.ok(Exit.isFailure(exit))
      assert.deepEqual(Cause.dieOption(exit.cause), Option.some(error))
    })
  }

  it("a connection the server refuses is transient, whatever its reason", () => {
    const notAccepting = driverError(
      'database "pets" is not currently accepting connections',
      "55000",
    )
    assert.equal(isTransient(refusedConnection(notAccepting)), true)
    assert.equal(isTransient(wrapped(notAccepting)), false)
  })

  it("lets the driver's code decide, whatever the message says", () => {
    assert.equal(isTransient(wrapped(driverError("Connection terminated", "23505"))), false)
  })

  it("does not loop on a cause chain that cycles", () => {
    const first: Error = new Error("first")
    const second = new Error("second", { cause: first })
    Object.assign(first, { cause: second })
    assert.equal(isTransient(first), false)
  })
})
