import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import {
  PetRepository,
  StorageUnavailable,
  type NewPet,
  type Pet,
  type PetSlice,
} from "@petstore/core"
import { Array, Cause, Effect, Layer, Option, Order, Schema, type Scope } from "effect"
import { makeGroupCommit, type GroupCommitOptions } from "./group-commit.js"
import { migrate } from "./pet-migrations.js"
import { PetFromRow } from "./PetRow.js"

export interface SqlPetRepositoryOptions {
  /** How concurrent creates share commits; see `GroupCommitOptions`. */
  readonly groupCommit?: Partial<GroupCommitOptions>
}

/**
 * Measured in tools/bench/group-commit.ts: holding a batch open for one event-loop turn batches
 * as well as a 1 ms timer, without delaying a create that arrives alone.
 */
export const defaultGroupCommit: GroupCommitOptions = { maxBatchSize: 256, window: 0 }

const unavailable = (cause: unknown) => new StorageUnavailable({ cause })

// A row that is not a valid Pet (an id beyond 2^53 − 1, say) means the data breaks the schema's
// own CHECKs: retrying cannot help, so it is a defect, not StorageUnavailable.
const decodePets = (rows: ReadonlyArray<unknown>) =>
  Effect.orDie(Schema.decodeUnknown(Schema.Array(PetFromRow))(rows))

const byId = Order.mapInput(Order.number, (pet: Pet) => pet.id)

/**
 * Pairs each pet sent with the row inserted for it. Neither engine promises that `RETURNING`
 * follows the order of `VALUES`, but both assign the ids in that order, so the rows sorted by id
 * line up with the pets sent; the pairing is checked field by field.
 */
const inSentOrder = (sent: ReadonlyArray<NewPet>, inserted: ReadonlyArray<Pet>) => {
  const rows = Array.sort(inserted, byId)
  const lineUp =
    rows.length === sent.length &&
    Array.every(
      Array.zip(sent, rows),
      ([pet, row]) =>
        pet.name === row.name && pet.categoryId === row.categoryId && pet.status === row.status,
    )
  return lineUp
    ? Effect.succeed(rows)
    : Effect.dieMessage("the rows inserted do not line up with the pets sent")
}

/**
 * The `PetRepository` on any `@effect/sql` client (SQLite and PostgreSQL are tested). It
 * migrates the schema, then creates pets through group commit: creates that arrive together
 * are inserted by one statement in one transaction, and each is answered after that commit.
 * Driver failures become `StorageUnavailable`.
 */
export const make = (
  options: SqlPetRepositoryOptions = {},
): Effect.Effect<PetRepository["Type"], StorageUnavailable, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* Effect.catchAllCause(migrate, (cause) => Effect.fail(unavailable(Cause.squash(cause))))

    const columns = sql.literal(`id, name, category_id AS "categoryId", status`)

    // SQLite answers bigints for integer columns instead of rounding them; PostgreSQL's int8
    // comes as text either way.
    const query = <A, E>(statement: Effect.Effect<A, E>) =>
      Effect.provideService(statement, SqlClient.SafeIntegers, true)

    // On PostgreSQL the lock makes concurrent processes assign ids in commit order, so a reader
    // never sees a pet with a higher id before one with a lower id; a cursor then skips nothing.
    // Readers are not blocked by it. SQLite has a single writer already.
    const serializeWriters = sql.onDialectOrElse({
      pg: () => Effect.asVoid(sql`LOCK TABLE pets IN EXCLUSIVE MODE`),
      orElse: () => Effect.void,
    })

    // @effect/sql makes a failed COMMIT or ROLLBACK a defect; to the store it is one more way of
    // being unavailable (a connection lost mid-transaction, say).
    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) =>
      Effect.catchSomeDefect(sql.withTransaction(effect), (defect) =>
        defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none(),
      )

    const insertAll = (pets: Array.NonEmptyReadonlyArray<NewPet>) =>
      inTransaction(
        Effect.zipRight(
          serializeWriters,
          sql`INSERT INTO pets ${sql.insert(
            pets.map((pet) => ({
              name: pet.name,
              category_id: pet.categoryId,
              status: pet.status ?? null,
            })),
          )} RETURNING ${columns}`,
        ),
      ).pipe(
        query,
        Effect.mapError(unavailable),
        Effect.flatMap(decodePets),
        Effect.flatMap((inserted) => inSentOrder(pets, inserted)),
      )

    const create = yield* makeGroupCommit(insertAll, {
      ...defaultGroupCommit,
      ...options.groupCommit,
    })

    const selectPage = ({ status, afterId, limit }: PetSlice) => {
      const after = Option.getOrElse(afterId, () => 0)
      return Option.match(status, {
        onNone: () =>
          sql`SELECT ${columns} FROM pets WHERE id > ${after} ORDER BY id LIMIT ${limit}`,
        // Both forms make the engine walk the (status, id) index. Given `status = ? AND id > ?`
        // alone, planners may walk the primary key and filter instead, reading every pet of
        // another status after the cursor: O(n) when the status wanted is rare there.
        // PostgreSQL has no index hints but uses a row-value range as an index bound; SQLite
        // does not bound the id by it, but takes INDEXED BY.
        onSome: (wanted) =>
          sql.onDialectOrElse({
            sqlite: () =>
              sql`SELECT ${columns} FROM pets INDEXED BY pets_status_id
                  WHERE status = ${wanted} AND id > ${after} ORDER BY id LIMIT ${limit}`,
            orElse: () =>
              sql`SELECT ${columns} FROM pets
                  WHERE (status, id) > (${wanted}, ${after})
                    AND (status, id) <= (${wanted}, ${Number.MAX_SAFE_INTEGER})
                  ORDER BY status, id LIMIT ${limit}`,
          }),
      })
    }

    return PetRepository.of({
      create,
      findById: (id) =>
        sql`SELECT ${columns} FROM pets WHERE id = ${id}`.pipe(
          query,
          Effect.mapError(unavailable),
          Effect.flatMap(decodePets),
          Effect.map(Array.head),
        ),
      list: (slice) =>
        selectPage(slice).pipe(query, Effect.mapError(unavailable), Effect.flatMap(decodePets)),
    })
  })

/** The repository on the `SqlClient` the layer is given. */
export const layer = (
  options: SqlPetRepositoryOptions = {},
): Layer.Layer<PetRepository, StorageUnavailable, SqlClient.SqlClient> =>
  Layer.scoped(PetRepository, make(options))
