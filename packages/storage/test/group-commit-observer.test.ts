import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Array, Effect } from "effect"
import { makeGroupCommit, type GroupCommitOptions } from "../src/sql/group-commit.js"

const options = (observeBatchSize: (size: number) => void): GroupCommitOptions => ({
  maxBatchSize: 1000,
  window: 0,
  commitTimeout: "10 seconds",
  maxWaiting: 10_000,
  observeBatchSize,
})

/** A commit that records each batch's size and answers every item doubled. */
const recordingCommit = () => {
  const sizes: Array<number> = []
  const commit = (items: Array.NonEmptyReadonlyArray<number>) =>
    Effect.as(
      Effect.sync(() => sizes.push(items.length)),
      items.map((item) => item * 2),
    )
  return { sizes, commit }
}

describe("group commit's batch size observer", () => {
  it("is told the size of every batch committed", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { sizes, commit } = recordingCommit()
          const observed: Array<number> = []
          const submit = yield* makeGroupCommit(
            commit,
            options((size) => observed.push(size)),
          )
          yield* Effect.forEach(Array.range(1, 50), submit, { concurrency: "unbounded" })
          yield* Effect.forEach(Array.range(1, 3), submit)
          assert.deepEqual(observed, sizes)
          assert.equal(
            observed.reduce((sum, size) => sum + size, 0),
            53,
          )
        }),
      ),
    ))

  it("cannot stop commits by throwing", () =>
    Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { commit } = recordingCommit()
          const submit = yield* makeGroupCommit(
            commit,
            options(() => {
              throw new Error("a broken metrics registry")
            }),
          )
          const first = yield* submit(1)
          const rest = yield* Effect.forEach(Array.range(2, 20), submit, {
            concurrency: "unbounded",
          })
          assert.deepEqual(
            [first, ...rest],
            Array.range(1, 20).map((item) => item * 2),
          )
        }).pipe(Effect.timeout("5 seconds")),
      ),
    ))
})
