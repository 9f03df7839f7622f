import * as SqlClient from "@effect/sql/SqlClient"
import {
  IdempotencyKey,
  IdempotencyScope,
  PetId,
  PetRepository,
  StorageUnavailable,
  type IdempotencyClaim,
  type NewPet,
  Pet,
  type PetSlice,
  type PetSlicePage,
} from "@petstore/core"
import {
  Array,
  Cause,
  Clock,
  type Duration,
  Effect,
  Either,
  Layer,
  Option,
  Schema,
  type Scope,
} from "effect"
import { makeGroupCommit, type GroupCommitOptions } from "./group-commit.js"
import { defaultLockWait, waitingForLocks } from "./lock-wait.js"
import {
  claimId,
  idempotencyTtlMillis,
  makeInFlightClaims,
  purgeInBackground,
  type IdempotencyOptions,
} from "../idempotency-retention.js"
import {
  answerBatch,
  planBatch,
  type BatchAnswer,
  type BatchItem,
  type StoredClaim,
} from "./pet-batch.js"
import { migrate } from "./pet-migrations.js"
import { exactNumber, PetFromRow } from "./PetRow.js"
import { inTransaction as inStoreTransaction } from "./store-transaction.js"
import { unavailableOrDefect } from "./transient-failure.js"

export interface SqlPetRepositoryOptions extends IdempotencyOptions {
  /** How concurrent creates share commits; see `GroupCommitOptions`. */
  readonly groupCommit?: Partial<GroupCommitOptions>
  /**
   * How long an operation waits, off the event loop, for a lock another connection holds on an
   * SQLite file before failing with `StorageUnavailable`; 5 s unless given. See `waitingForLocks`.
   */
  readonly lockWait?: Duration.DurationInput
}

/**
 * Measured in tools/bench/group-commit.ts: holding a batch open for one event-loop turn batches
 * as well as a 1 ms timer, without delaying a create that arrives alone.
 */
export const defaultGroupCommit: GroupCommitOptions = {
  maxBatchSize: 256,
  window: 0,
  commitTimeout: "10 seconds",
  maxWaiting: 10_000,
}

const unavailable = (cause: unknown) => new StorageUnavailable({ cause })

/** `rows` as a page of `limit` pets, the slice having been selected with `limit + 1` rows. */
const toPage = (rows: ReadonlyArray<Pet>, limit: number): PetSlicePage => ({
  pets: rows.slice(0, limit),
  hasMore: rows.length > limit,
})

// A row that is not a valid Pet (an id beyond 2^53 − 1, say) means the data breaks the schema's
// own CHECKs: retrying cannot help, so it is a defect, not StorageUnavailable.
const decodePetRows = Schema.decodeUnknown(Schema.Array(PetFromRow))
const decodePets = (rows: ReadonlyArray<unknown>) => Effect.orDie(decodePetRows(rows))

const decodeClaimColumns = Schema.decodeUnknown(
  Schema.Array(
    Schema.Struct({ scope: IdempotencyScope, key: IdempotencyKey, fingerprint: Schema.String }),
  ),
)

/** Rows of `idempotency_keys` joined with their pets' columns. */
const decodeStoredClaims = (rows: ReadonlyArray<unknown>) =>
  Effect.map(
    Effect.all([Effect.orDie(decodeClaimColumns(rows)), decodePets(rows)]),
    ([claims, pets]) => Array.zipWith(claims, pets, (claim, pet) => ({ ...claim, pet })),
  )

/**
 * The pets inserted, in the order they were sent. Neither engine promises that `RETURNING`
 * follows the order of `VALUES`, but both assign the ids in that order, so the rows sorted by id
 * line up with the pets sent; the pairing is checked field by field. The fields are the sent
 * pets', checked when they were made, so of each row only the id is decoded: a full decode of
 * every row costs more than the insert.
 */
const inSentOrder = (
  sent: ReadonlyArray<NewPet>,
  inserted: ReadonlyArray<Readonly<Record<string, unknown>>>,
) => {
  const rows = inserted
    .map((row) => ({ row, id: exactNumber(row["id"]) }))
    .sort((a, b) => (a.id ?? 0) - (b.id ?? 0))
  const pets: Array<Pet> = []
  for (const [index, pet] of sent.entries()) {
    const match = rows[index]
    if (
      match === undefined ||
      match.id === undefined ||
      match.id <= 0 ||
      match.row["name"] !== pet.name ||
      exactNumber(match.row["categoryId"]) !== pet.categoryId ||
      (match.row["status"] ?? undefined) !== pet.status
    )
      return Effect.dieMessage("the rows inserted do not line up with the pets sent")
    pets.push(new Pet({ ...pet, id: PetId.make(match.id, true) }, true))
  }
  return rows.length === sent.length
    ? Effect.succeed(pets)
    : Effect.dieMessage("the rows inserted do not line up with the pets sent")
}

/**
 * The `PetRepository` on any `@effect/sql` client (SQLite and PostgreSQL are tested). It
 * migrates the schema, then creates pets through group commit: creates that arrive together
 * are inserted by one statement in one transaction (on SQLite, without keys, the statement is
 * the transaction), and each is answered after that commit.
 * Driver failures a retry may cure (the store unreachable, busy, full or timed out) become
 * `StorageUnavailable`, as do a batch that outlasts its bound and a create refused by a full
 * queue; any other driver failure is a defect.
 *
 * `createOnce` shares those batches. While a create with the same scope and key has not finished
 * in this process, another fails at once with `IdempotencyKeyInUse`; a process knows nothing of
 * another's in-flight creates, but their batches take turns under the writers' lock (one writer
 * on SQLite, `LOCK TABLE` on PostgreSQL), and each looks its keys up after taking it, so the
 * later one replays what the earlier one committed. Keys expire after `idempotencyTtl` and are
 * deleted by a fiber of the scope every `idempotencyPurgeInterval`.
 */
export const make = (
  options: SqlPetRepositoryOptions = {},
): Effect.Effect<PetRepository["Type"], StorageUnavailable, SqlClient.SqlClient | Scope.Scope> =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ttl = idempotencyTtlMillis(options)
    const locked = waitingForLocks(options.lockWait ?? defaultLockWait)
    yield* Effect.catchAllCause(locked(migrate), (cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.fail(unavailable(Cause.squash(cause))),
    )

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

    const inTransaction = <A, E>(effect: Effect.Effect<A, E>) => inStoreTransaction(sql, effect)

    const insertPets = (pets: Array.NonEmptyReadonlyArray<NewPet>) =>
      sql`INSERT INTO pets ${sql.insert(
        pets.map((pet) => ({
          name: pet.name,
          category_id: pet.categoryId,
          status: pet.status ?? null,
        })),
      )} RETURNING ${columns}`.pipe(Effect.flatMap((inserted) => inSentOrder(pets, inserted)))

    // Expired keys not purged yet are ignored here and replaced by `storeClaims`.
    const selectStoredClaims = (
      claims: Array.NonEmptyReadonlyArray<IdempotencyClaim>,
      cutoff: number,
    ) =>
      sql`SELECT k.scope, k.idempotency_key AS "key", k.fingerprint,
                 p.id, p.name, p.category_id AS "categoryId", p.status
          FROM idempotency_keys k JOIN pets p ON p.id = k.pet_id
          WHERE (k.scope, k.idempotency_key) IN (VALUES ${sql.csv(
            claims.map((claim) => sql`(${claim.scope}, ${claim.key})`),
          )})
            AND k.created_at > ${cutoff}`.pipe(
        Effect.flatMap(decodeStoredClaims),
        Effect.map(
          (rows) =>
            new Map(
              rows.map(({ scope, key, fingerprint, pet }) => [
                claimId({ scope, key }),
                { fingerprint, pet },
              ]),
            ),
        ),
      )

    // A key row may only replace an expired one. Under the writers' lock the lookup has already
    // seen any live row; should one appear anyway, the batch is rolled back rather than keep a
    // pet its key does not point to.
    const storeClaims = (
      claims: Array.NonEmptyReadonlyArray<{ claim: IdempotencyClaim; pet: Pet }>,
      now: number,
    ) =>
      sql`INSERT INTO idempotency_keys ${sql.insert(
        claims.map(({ claim, pet }) => ({
          scope: claim.scope,
          idempotency_key: claim.key,
          fingerprint: claim.fingerprint,
          pet_id: pet.id,
          created_at: now,
        })),
      )}
      ON CONFLICT (scope, idempotency_key) DO UPDATE
        SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id,
            created_at = excluded.created_at
        WHERE idempotency_keys.created_at <= ${now - ttl}
      RETURNING scope`.pipe(
        Effect.flatMap((rows) =>
          rows.length === claims.length
            ? Effect.void
            : Effect.dieMessage("an idempotency key was stored by another writer meanwhile"),
        ),
      )

    /**
     * One batch, in one transaction: the keys the batch claims are looked up (one query), then
     * the pets are inserted (one statement) and their keys stored (one statement), so neither a
     * pet nor its key is ever kept without the other.
     */
    const commitClaimingBatch = (items: Array.NonEmptyReadonlyArray<BatchItem>) =>
      Effect.gen(function* () {
        yield* serializeWriters
        const now = yield* Clock.currentTimeMillis
        const claimed = Array.filterMap(items, (item) => Option.fromNullable(item.claim))
        const stored = Array.isNonEmptyReadonlyArray(claimed)
          ? yield* selectStoredClaims(claimed, now - ttl)
          : new Map<string, StoredClaim>()
        const plan = planBatch(items, stored)
        const inserted = Array.isNonEmptyReadonlyArray(plan.inserts)
          ? yield* insertPets(plan.inserts)
          : []
        const claims = Array.filterMap(plan.claims, ({ claim, index }) =>
          Option.map(Array.get(inserted, index), (pet) => ({ claim, pet })),
        )
        if (Array.isNonEmptyReadonlyArray(claims)) yield* storeClaims(claims, now)
        return yield* answerBatch(plan, inserted)
      }).pipe(inTransaction)

    /**
     * A batch without keys on SQLite is one INSERT, which SQLite runs as a transaction of its own
     * (committed, and with `synchronous=FULL` fsynced, before it returns): an explicit one would
     * only add `BEGIN` and `COMMIT` and @effect/sql's work around them. (Should the rows returned
     * not line up with the pets sent, a defect, those pets stay stored while their creates fail.)
     * PostgreSQL takes its lock in a transaction.
     */
    const statementIsTransaction = sql.onDialectOrElse({
      sqlite: () => true,
      orElse: () => false,
    })
    const commitBatch = (items: Array.NonEmptyReadonlyArray<BatchItem>) =>
      (statementIsTransaction && items.every((item) => item.claim === undefined)
        ? Effect.map(insertPets(Array.map(items, (item) => item.pet)), (pets) =>
            pets.map((pet): BatchAnswer => Either.right({ pet, replayed: false })),
          )
        : commitClaimingBatch(items)
      ).pipe(query, locked, Effect.catchAll(unavailableOrDefect))

    const submit = yield* makeGroupCommit(commitBatch, {
      ...defaultGroupCommit,
      ...options.groupCommit,
    })
    const commit = (item: BatchItem) =>
      Effect.mapError(submit(item), (error) =>
        error instanceof StorageUnavailable ? error : unavailable(error),
      )
    const create = (pet: NewPet) =>
      Effect.flatMap(commit({ pet }), (answer) =>
        Either.match(answer, {
          onLeft: () => Effect.dieMessage("a create without an idempotency key was refused"),
          onRight: (created) => Effect.succeed(created.pet),
        }),
      )
    const guard = makeInFlightClaims()
    const createOnce = (pet: NewPet, claim: IdempotencyClaim) =>
      guard(
        claim,
        Effect.flatMap(commit({ pet, claim }), (answer) => answer),
      )

    yield* purgeInBackground(
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        locked(query(sql`DELETE FROM idempotency_keys WHERE created_at <= ${now - ttl}`)),
      ),
      options,
    )

    // One row beyond the limit tells whether more follow, without a second query.
    const selectRows = ({ status, afterId, limit: pageLimit }: PetSlice) => {
      const after = Option.getOrElse(afterId, () => 0)
      const limit = pageLimit + 1
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
      createOnce,
      findById: (id) =>
        sql`SELECT ${columns} FROM pets WHERE id = ${id}`.pipe(
          query,
          locked,
          Effect.catchAll(unavailableOrDefect),
          Effect.flatMap(decodePets),
          Effect.map(Array.head),
        ),
      list: (slice) =>
        selectRows(slice).pipe(
          query,
          locked,
          Effect.catchAll(unavailableOrDefect),
          Effect.flatMap(decodePets),
          Effect.map((rows) => toPage(rows, slice.limit)),
        ),
    })
  })

/** The repository on the `SqlClient` the layer is given. */
export const layer = (
  options: SqlPetRepositoryOptions = {},
): Layer.Layer<PetRepository, StorageUnavailable, SqlClient.SqlClient> =>
  Layer.scoped(PetRepository, make(options))
