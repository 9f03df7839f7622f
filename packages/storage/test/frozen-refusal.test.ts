import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { SqlError } from "@effect/sql/SqlError"
import { frozenMessage, isFrozenRefusal } from "../src/sql/frozen-refusal.js"
import { isTransient } from "../src/sql/transient-failure.js"

const driverError = (message: string, code: string) => Object.assign(new Error(message), { code })
const wrapped = (cause: unknown) => new SqlError({ cause, message: "Failed to execute statement" })

describe("a frozen store's refusal", () => {
  it("is StorageUnavailable (a retry may pass) as SQLite's trigger raises it, despite its constraint code", () => {
    const refusal = wrapped(driverError(frozenMessage, "SQLITE_CONSTRAINT_TRIGGER"))
    assert.equal(isFrozenRefusal(refusal), true)
    assert.equal(isTransient(refusal), true)
  })

  it("is StorageUnavailable as PostgreSQL's trigger raises it (SQLSTATE 55000)", () => {
    const refusal = wrapped(driverError(frozenMessage, "55000"))
    assert.equal(isFrozenRefusal(refusal), true)
    assert.equal(isTransient(refusal), true)
  })

  it("is told apart from any other trigger or constraint failure, which stays a defect", () => {
    const other = wrapped(
      driverError("CHECK constraint failed: status", "SQLITE_CONSTRAINT_TRIGGER"),
    )
    assert.equal(isFrozenRefusal(other), false)
    assert.equal(isTransient(other), false)
    assert.equal(
      isTransient(wrapped(driverError("object not in prerequisite state", "55000"))),
      false,
    )
  })

  it("keeps the message the migration writes into the triggers free of quotes and %", () => {
    assert.doesNotMatch(frozenMessage, /['%]/)
  })
})
