import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { recordingTracer } from "@petstore/core/testing"
import { Array, Effect, Option } from "effect"
import { makeGroupCommit, type GroupCommitOptions } from "../src/sql/group-commit.js"

const options: GroupCommitOptions = {
  maxBatchSize: 1000,
  window: 0,
  commitTimeout: "10 seconds",
  maxWaiting: 10_000,
}

/**
 * A commit that records each batch, makes one `sql.execute` span per batch (as a statement of
 * @effect/sql would) and answers every item doubled.
 */
const statementCommit = () => {
  const batches: Array<ReadonlyArray<number>> = []
  const commit = (items: Array.NonEmptyReadonlyArray<number>) =>
    Effect.withSpan(
      Effect.as(
        Effect.sync(() => batches.push(items)),
        items.map((item) => item * 2),
      ),
      "sql.execute",
    )
  return { batches, commit }
}

/** Submits `item` inside its own span, `create-<item>`, as a traced request would. */
const tracedSubmit =
  <E>(submit: (item: number) => Effect.Effect<number, E>) =>
  (item: number) =>
    Effect.withSpan(submit(item), `create-${item}`)

const onlyOne = <A>(found: ReadonlyArray<A>, what: string): A => {
  assert.equal(found.length, 1, `${found.length} ${what}`)
  return found[0]!
}

describe("group commit's spans", () => {
  it("commits a batch of traced items in one span: the first item's child, linked to the others", () => {
    const { tracer, named } = recordingTracer()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = statementCommit()
          const submit = yield* makeGroupCommit(commit, options)
          yield* Effect.forEach(Array.range(1, 5), tracedSubmit(submit), {
            concurrency: "unbounded",
          })
          const items = onlyOne(batches, "batches")
          const itemSpan = (item: number) => onlyOne(named(`create-${item}`), `create-${item}`)

          const batch = onlyOne(named("group-commit.batch"), "batch spans")
          const [first, ...others] = items
          assert.deepEqual(batch.parent, Option.some(itemSpan(first!)))
          assert.deepEqual(
            batch.links.map((link) => link.span),
            others.map(itemSpan),
          )
          assert.equal(batch.attributes.get("petstore.batch.size"), 5)
          assert.equal(batch.kind, "internal")
          assert.equal(batch.status._tag, "Ended")
          // What the commit does (its SQL statements) happens under the batch span.
          assert.deepEqual(onlyOne(named("sql.execute"), "statements").parent, Option.some(batch))

          const waits = named("group-commit.wait")
          assert.equal(waits.length, 5)
          for (const item of items) {
            const wait = onlyOne(
              waits.filter((span) => Option.getOrNull(span.parent) === itemSpan(item)),
              `wait spans under create-${item}`,
            )
            assert.equal(wait.attributes.get("petstore.batch.span_id"), batch.spanId)
            assert.equal(wait.attributes.get("petstore.batch.trace_id"), batch.traceId)
            assert.equal(wait.attributes.get("petstore.batch.size"), 5)
            assert.deepEqual(
              wait.events.map((event) => event.name),
              ["group-commit.batch.started"],
            )
            assert.ok(wait.status._tag === "Ended" && batch.status._tag === "Ended")
            assert.ok(wait.status.startTime <= batch.status.startTime, "the wait began later")
            assert.ok(wait.status.endTime >= batch.status.endTime, "the wait ended first")
          }
        }),
      ).pipe(Effect.withTracer(tracer)),
    )
  })

  it("makes a lone traced item's batch the child of its span, in its trace", () => {
    const { tracer, named } = recordingTracer()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { commit } = statementCommit()
          const submit = yield* makeGroupCommit(commit, options)
          assert.equal(yield* tracedSubmit(submit)(21), 42)
          const create = onlyOne(named("create-21"), "create spans")
          const batch = onlyOne(named("group-commit.batch"), "batch spans")
          assert.deepEqual(batch.parent, Option.some(create))
          assert.equal(batch.traceId, create.traceId)
          assert.deepEqual(batch.links, [])
          assert.equal(batch.attributes.get("petstore.batch.size"), 1)
          assert.deepEqual(onlyOne(named("sql.execute"), "statements").parent, Option.some(batch))
          const wait = onlyOne(named("group-commit.wait"), "wait spans")
          assert.deepEqual(wait.parent, Option.some(create))
          assert.equal(wait.attributes.get("petstore.batch.span_id"), batch.spanId)
        }),
      ).pipe(Effect.withTracer(tracer)),
    )
  })

  it("makes no span for untraced items or their statements, nor for unsampled ones", () => {
    const { tracer, spans } = recordingTracer()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = statementCommit()
          const submit = yield* makeGroupCommit(commit, options)
          yield* Effect.forEach(Array.range(1, 5), submit, { concurrency: "unbounded" })
          // With the tracer disabled, spans are no-ops that are not sampled.
          yield* Effect.forEach(Array.range(6, 10), tracedSubmit(submit), {
            concurrency: "unbounded",
          }).pipe(Effect.withTracerEnabled(false))
          assert.equal(batches.flat().length, 10)
          assert.deepEqual(
            spans.map((span) => span.name).filter((name) => name.startsWith("group-commit")),
            [],
          )
          // Nor do their statements: they would start traces no request belongs to.
          assert.deepEqual(
            spans.map((span) => span.name),
            [],
          )
        }),
      ).pipe(Effect.withTracer(tracer)),
    )
  })

  it("parents a mixed batch to its first traced item and counts every item", () => {
    const { tracer, named } = recordingTracer()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { batches, commit } = statementCommit()
          const submit = yield* makeGroupCommit(commit, options)
          yield* Effect.forEach(
            Array.range(1, 6),
            (item) => (item % 2 === 0 ? tracedSubmit(submit)(item) : submit(item)),
            { concurrency: "unbounded" },
          )
          const items = onlyOne(batches, "batches")
          const traced = items.filter((item) => item % 2 === 0)
          const itemSpan = (item: number) => onlyOne(named(`create-${item}`), `create-${item}`)
          const batch = onlyOne(named("group-commit.batch"), "batch spans")
          assert.deepEqual(batch.parent, Option.some(itemSpan(traced[0]!)))
          assert.deepEqual(
            batch.links.map((link) => link.span),
            traced.slice(1).map(itemSpan),
          )
          assert.equal(batch.attributes.get("petstore.batch.size"), 6)
          assert.equal(named("group-commit.wait").length, 3)
        }),
      ).pipe(Effect.withTracer(tracer)),
    )
  })

  it("records the batch with the caller's tracer, whatever tracer the store was opened with", () => {
    const { tracer, named } = recordingTracer()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const { commit } = statementCommit()
          // Opened before any tracer is installed, as a layer built ahead of tracing would be.
          const submit = yield* makeGroupCommit(commit, options)
          yield* Effect.forEach(Array.range(1, 3), tracedSubmit(submit), {
            concurrency: "unbounded",
          }).pipe(Effect.withTracer(tracer))
          const batch = onlyOne(named("group-commit.batch"), "batch spans")
          assert.deepEqual(onlyOne(named("sql.execute"), "statements").parent, Option.some(batch))
        }),
      ),
    )
  })

  it("ends the batch span with the commit's failure, and answers every caller with it", () => {
    const { tracer, named } = recordingTracer()
    return Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const submit = yield* makeGroupCommit(
            (
              _: Array.NonEmptyReadonlyArray<number>,
            ): Effect.Effect<ReadonlyArray<number>, string> => Effect.fail("disk unplugged"),
            options,
          )
          const exits = yield* Effect.forEach(
            Array.range(1, 3),
            (item) => Effect.exit(tracedSubmit(submit)(item)),
            { concurrency: "unbounded" },
          )
          assert.ok(exits.every((exit) => exit._tag === "Failure"))
          const batch = onlyOne(named("group-commit.batch"), "batch spans")
          assert.ok(batch.status._tag === "Ended" && batch.status.exit._tag === "Failure")
          for (const wait of named("group-commit.wait"))
            assert.ok(wait.status._tag === "Ended" && wait.status.exit._tag === "Failure")
        }),
      ).pipe(Effect.withTracer(tracer)),
    )
  })
})
