import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Array, Cause, Deferred, Duration, Effect, Exit, Fiber, Option, Scope } from "effect"
import { makeGroupCommit, type GroupCommitOptions } from "../src/sql/group-commit.js"

const options = (overrides: Partial<GroupCommitOptions>): GroupCommitOptions => ({
  maxBatchSize: 1000,
  window: 0,
  commitTimeout: "10 seconds",
  maxWaiting: 10_000,
  ...overrides,
})

/** The `_tag` of the error an exit failed with, if it failed with one. */
const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string } | string>) =>
  Exit.isFailure(exit)
    ? Option.map(Cause.failureOption(exit.cause), (error) =>
        typeof error === "string" ? error : error._tag,
      )
    : Option.none()

/** Waits for a fiber at most `bound`, failing the test (not hanging it) when it is not done. */
const awaitWithin = <A, E>(fiber: Fiber.Fiber<A, E>, bound: Duration.DurationInput) =>
  Effect.flatMap(Effect.timeout(Fiber.await(fiber), bound), (exit) => Effect.succeed(exit)).pipe(
    Effect.catchTag("TimeoutException", () =>
      Effect.dieMessage(`a caller was still waiting after ${Duration.format(bound)}`),
    ),
  )

/** A commit that records each batch and answers every item doubled, after `delayMs`. */
const recordingCommit = (delayMs = 5) => {
  const batches: Array<ReadonlyArray<number>> = []
  const commit = (items: Array.NonEmptyReadonlyArray<number>) =>
    Effect.as(
      Effect.sleep(delayMs),
      items.map((item) => item * 2),
    ).pipe(Effect.tap(() => Effect.sync(() => batches.push(items))))
  return { batches, commit }
}

const submitAll = <E>(submit: (item: number) => Effect.Effect<number, E>, count: number) =>
  Effect.forEach(Array.range(1, count), submit, { concurrency: "unbounded" })

describe("group commit", () => {
  it("commits items that arrive together in one batch, each caller getting its own result", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = recordingCommit()
          const submit = yield* makeGroupCommit(commit, options({}))
          const results = yield* submitAll(submit, 100)
          assert.deepEqual(
            results,
            Array.range(1, 100).map((item) => item * 2),
          )
          assert.ok(batches.length < 10, `100 concurrent items took ${batches.length} commits`)
          assert.deepEqual(
            batches.flat().sort((a, b) => a - b),
            Array.range(1, 100),
          )
        }),
      ),
    ))

  it("never puts more than maxBatchSize items in one commit", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = recordingCommit()
          const submit = yield* makeGroupCommit(commit, options({ maxBatchSize: 8 }))
          yield* submitAll(submit, 50)
          assert.ok(batches.every((batch) => batch.length <= 8))
          assert.equal(batches.flat().length, 50)
        }),
      ),
    ))

  it("commits what a full batch left behind in the same turn of the event loop", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          // Committed synchronously, as SQLite commits: a turn's end is the next `setImmediate`.
          const turns: Array<number> = []
          let turn = 0
          const submit = yield* makeGroupCommit(
            (items: Array.NonEmptyReadonlyArray<number>) =>
              Effect.sync(() => {
                if (turns.length === 0) setImmediate(() => (turn += 1))
                turns.push(turn)
                return items
              }),
            options({ maxBatchSize: 8 }),
          )
          yield* submitAll(submit, 20)
          assert.deepEqual(turns, [0, 0, 0], "three batches of 8, 8 and 4, all in the first turn")
        }),
      ),
    ))

  it("answers a caller only after its batch has committed", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const committed = new Set<number>()
          const submit = yield* makeGroupCommit(
            (items: Array.NonEmptyReadonlyArray<number>) =>
              Effect.as(
                Effect.zipRight(
                  Effect.sleep(20),
                  Effect.sync(() => items.forEach((item) => committed.add(item))),
                ),
                items,
              ),
            options({}),
          )
          yield* Effect.forEach(
            Array.range(1, 20),
            (item) => Effect.map(submit(item), (answer) => assert.ok(committed.has(answer))),
            { concurrency: "unbounded" },
          )
        }),
      ),
    ))

  it("fails every caller of a failed batch with its error, and keeps committing after it", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          let failNext = true
          const submit = yield* makeGroupCommit(
            (items: Array.NonEmptyReadonlyArray<number>) =>
              Effect.suspend(() => {
                if (!failNext) return Effect.succeed(items)
                failNext = false
                return Effect.fail("disk unplugged")
              }),
            options({}),
          )
          const exits = yield* Effect.forEach(
            Array.range(1, 10),
            (item) => Effect.exit(submit(item)),
            {
              concurrency: "unbounded",
            },
          )
          const failures = exits.filter(Exit.isFailure)
          assert.ok(failures.length > 0)
          for (const failure of failures) {
            assert.deepEqual(failureTag(failure), Option.some("disk unplugged"))
          }
          assert.equal(yield* submit(11), 11)
        }),
      ),
    ))

  it("with a window, gathers items that arrive within it", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = recordingCommit(0)
          const submit = yield* makeGroupCommit(commit, options({ window: "50 millis" }))
          yield* Effect.forEach(
            Array.range(1, 5),
            (item) => Effect.zipRight(Effect.sleep(item * 5), submit(item)),
            { concurrency: "unbounded" },
          )
          assert.deepEqual(batches, [[1, 2, 3, 4, 5]])
        }),
      ),
    ))

  it("fails every caller of a batch whose commit outlasts commitTimeout, then commits again", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          let hang = true
          const submit = yield* makeGroupCommit(
            (items: Array.NonEmptyReadonlyArray<number>) =>
              Effect.suspend(() =>
                hang
                  ? // A store that hangs, and hangs its rollback too. (No timer keeps the process
                    // alive, so should the bound go, node ends the test as failed, never hangs.)
                    Effect.onInterrupt(
                      Effect.async<never>(() => {}),
                      () => Effect.sleep("1 second"),
                    )
                  : Effect.succeed(items),
              ),
            options({ commitTimeout: "50 millis" }),
          )
          const callers = yield* Effect.forEach(Array.range(1, 5), (item) =>
            Effect.fork(submit(item)),
          )
          for (const caller of callers) {
            assert.deepEqual(
              failureTag(yield* awaitWithin(caller, "2 seconds")),
              Option.some("GroupCommitTimedOut"),
            )
          }
          hang = false
          assert.equal(yield* submit(6), 6)
        }),
      ),
    ))

  it("refuses an item at once when maxWaiting items are already waiting", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const started = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const submit = yield* makeGroupCommit(
            (items: Array.NonEmptyReadonlyArray<number>) =>
              Effect.as(
                Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)),
                items,
              ),
            options({ maxBatchSize: 1, maxWaiting: 3 }),
          )
          const committing = yield* Effect.fork(submit(1))
          yield* Deferred.await(started)
          const waiting = yield* Effect.forEach([2, 3, 4], (item) => Effect.fork(submit(item)))
          yield* Effect.sleep("20 millis")

          const refused = yield* Effect.exit(Effect.timeout(submit(5), "1 second"))
          assert.deepEqual(failureTag(refused), Option.some("GroupCommitQueueFull"))

          yield* Deferred.succeed(release, undefined)
          assert.deepEqual(yield* Fiber.join(Fiber.all([committing, ...waiting])), [1, 2, 3, 4])
        }),
      ),
    ))

  it("answers every caller when its scope closes: the batch in flight commits, the rest are interrupted", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const scope = yield* Scope.make()
        const started = yield* Deferred.make<void>()
        let committed = 0
        const submit = yield* Scope.extend(
          makeGroupCommit(
            (items: Array.NonEmptyReadonlyArray<number>) =>
              Effect.as(
                Effect.zipRight(Deferred.succeed(started, undefined), Effect.sleep("50 millis")),
                items,
              ).pipe(Effect.tap(() => Effect.sync(() => (committed += items.length)))),
            options({ maxBatchSize: 1 }),
          ),
          scope,
        )
        const inFlight = yield* Effect.fork(submit(1))
        yield* Deferred.await(started)
        const waiting = yield* Effect.forEach(Array.range(2, 6), (item) =>
          Effect.fork(submit(item)),
        )
        yield* Effect.sleep("10 millis")

        yield* Scope.close(scope, Exit.void)
        // Closing waits for the batch in flight, so whatever the scope closes next (the
        // database's connection) is still open for its commit.
        assert.equal(committed, 1, "the scope closed before the batch in flight committed")

        assert.deepEqual(yield* awaitWithin(inFlight, "2 seconds"), Exit.succeed(1))
        for (const caller of waiting) {
          const exit = yield* awaitWithin(caller, "2 seconds")
          assert.ok(Exit.isInterrupted(exit), `caller ended with ${String(exit)}`)
        }
        const late = yield* Effect.fork(submit(7))
        assert.ok(Exit.isInterrupted(yield* awaitWithin(late, "2 seconds")))
      }),
    ))
})
