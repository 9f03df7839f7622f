import { Array, Chunk, Deferred, Duration, Effect, Exit, Queue, type Scope } from "effect"

export interface GroupCommitOptions {
  /** The most items one commit takes. */
  readonly maxBatchSize: number
  /**
   * How long a batch stays open for further items after its first one arrives. Zero keeps it
   * open for one turn of the event loop: requests that have already arrived join it, and an
   * idle store adds no delay.
   */
  readonly window: Duration.DurationInput
}

interface Pending<I, A, E> {
  readonly item: I
  readonly result: Deferred.Deferred<A, E>
}

/** Resumes after the I/O callbacks already due have run (`setImmediate`), not in a microtask. */
const nextEventLoopTurn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * Commits items through one writer fiber that takes every item waiting, up to `maxBatchSize`,
 * and commits them together, so concurrent callers share one transaction and one fsync.
 * `commit` answers with one result per item, in the items' order; each caller resumes only
 * once its batch has committed, and every caller of a failed batch gets its failure.
 *
 * Returns the function that submits one item. When the scope closes, a batch being committed
 * finishes and callers still waiting are interrupted.
 */
export const makeGroupCommit = <I, A, E>(
  commit: (items: Array.NonEmptyReadonlyArray<I>) => Effect.Effect<ReadonlyArray<A>, E>,
  options: GroupCommitOptions,
): Effect.Effect<(item: I) => Effect.Effect<A, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Pending<I, A, E>>()
    const window = Duration.decode(options.window)
    const holdOpen = Duration.isZero(window) ? nextEventLoopTurn : Effect.sleep(window)

    const gather = (first: Pending<I, A, E>) =>
      Effect.map(
        Effect.zipRight(holdOpen, Queue.takeUpTo(queue, options.maxBatchSize - 1)),
        (rest) => Array.prepend(Chunk.toReadonlyArray(rest), first),
      )

    const settle = (batch: Array.NonEmptyReadonlyArray<Pending<I, A, E>>) =>
      Effect.flatMap(
        Effect.exit(commit(Array.map(batch, (pending) => pending.item))),
        (exit): Effect.Effect<void> => {
          if (Exit.isFailure(exit)) {
            return Effect.forEach(
              batch,
              (pending) => Deferred.failCause(pending.result, exit.cause),
              {
                discard: true,
              },
            )
          }
          if (exit.value.length !== batch.length) {
            const defect = new Error(
              `group commit: ${batch.length} items committed but ${exit.value.length} results returned`,
            )
            return Effect.forEach(batch, (pending) => Deferred.die(pending.result, defect), {
              discard: true,
            })
          }
          return Effect.forEach(
            Array.zip(batch, exit.value),
            ([pending, value]) => Deferred.succeed(pending.result, value),
            { discard: true },
          )
        },
      )

    // Once an item has left the queue it is committed and answered even if the scope is closing.
    const writer = Effect.forever(
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(Queue.take(queue)), (first) =>
          Effect.flatMap(gather(first), settle),
        ),
      ),
    )

    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.flatMap(Queue.takeAll(queue), (waiting) =>
          Effect.forEach(waiting, (pending) => Deferred.interrupt(pending.result), {
            discard: true,
          }),
        ),
        Queue.shutdown(queue),
      ),
    )
    yield* Effect.forkScoped(writer)

    return (item: I) =>
      Effect.flatMap(Deferred.make<A, E>(), (result) =>
        Effect.zipRight(Queue.offer(queue, { item, result }), Deferred.await(result)),
      )
  })
