import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Array, Cause, Effect, Exit, Option } from "effect"
import { makeGroupCommit } from "../src/group-commit.js"

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

const submitAll = (submit: (item: number) => Effect.Effect<number, string>, count: number) =>
  Effect.forEach(Array.range(1, count), submit, { concurrency: "unbounded" })

describe("group commit", () => {
  it("commits items that arrive together in one batch, each caller getting its own result", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = recordingCommit()
          const submit = yield* makeGroupCommit(commit, { maxBatchSize: 1000, window: 0 })
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
          const submit = yield* makeGroupCommit(commit, { maxBatchSize: 8, window: 0 })
          yield* submitAll(submit, 50)
          assert.ok(batches.every((batch) => batch.length <= 8))
          assert.equal(batches.flat().length, 50)
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
            { maxBatchSize: 1000, window: 0 },
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
            { maxBatchSize: 1000, window: 0 },
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
            assert.deepEqual(Cause.failureOption(failure.cause), Option.some("disk unplugged"))
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
          const submit = yield* makeGroupCommit(commit, { maxBatchSize: 1000, window: "50 millis" })
          yield* Effect.forEach(
            Array.range(1, 5),
            (item) => Effect.zipRight(Effect.sleep(item * 5), submit(item)),
            { concurrency: "unbounded" },
          )
          assert.deepEqual(batches, [[1, 2, 3, 4, 5]])
        }),
      ),
    ))
})
