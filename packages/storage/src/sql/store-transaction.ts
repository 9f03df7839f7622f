import type * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"

/**
 * `effect` in one transaction of `sql`. @effect/sql makes a failed `COMMIT` or `ROLLBACK` a
 * defect; here it is one more failure of the store (a connection lost mid-transaction, say).
 */
export const inTransaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | SqlError, R> =>
  Effect.catchSomeDefect(sql.withTransaction(effect), (defect) =>
    defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none(),
  )
