import {
  Array,
  Chunk,
  Data,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Queue,
  type Scope,
} from "effect"

export interface GroupCommitOptions {
  /** The most items one commit takes. */
  readonly maxBatchSize: number
  /**
   * How long a batch stays open for further items after its first one arrives. Zero keeps it
   * open for one turn of the event loop: requests that have already arrived join it, and an
   * idle store adds no delay.
   */
  readonly window: Duration.DurationInput
  /** How long one batch's commit may take before each of its callers fails with `GroupCommitTimedOut`. */
  readonly commitTimeout: Duration.DurationInput
  /** The most items waiting for a batch; an item offered beyond it fails at once with `GroupCommitQueueFull`. */
  readonly maxWaiting: number
  /**
   * Told the size of each batch as it is committed, for metrics. It runs on the writer fiber, so
   * it must be quick; should it throw, the error is ignored.
   */
  readonly observeBatchSize?: ((size: number) => void) | undefined
}

/** A batch's commit did not finish within `commitTimeout`; whether it took effect is unknown. */
export class GroupCommitTimedOut extends Data.TaggedError("GroupCommitTimedOut")<{
  readonly timeout: Duration.Duration
}> {
  override get message() {
    return `the batch did not commit within ${Duration.format(this.timeout)}`
  }
}

/** `maxWaiting` items were already waiting: the item was refused, not queued. */
export class GroupCommitQueueFull extends Data.TaggedError("GroupCommitQueueFull")<{
  readonly maxWaiting: number
}> {
  override get message() {
    return `${this.maxWaiting} items are already waiting to be committed`
  }
}

interface Pending<I, A, E> {
  readonly item: I
  readonly result: Deferred.Deferred<A, E | GroupCommitTimedOut>
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
): Effect.Effect<
  (item: I) => Effect.Effect<A, E | GroupCommitTimedOut | GroupCommitQueueFull>,
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const queue = yield* Queue.dropping<Pending<I, A, E>>(options.maxWaiting)
    const window = Duration.decode(options.window)
    const holdOpen = Duration.isZero(window) ? nextEventLoopTurn : Effect.sleep(window)
    const commitTimeout = Duration.decode(options.commitTimeout)
    const observe = (batch: ReadonlyArray<unknown>) =>
      Effect.ignore(Effect.try(() => options.observeBatchSize?.(batch.length)))

    const gather = (first: Pending<I, A, E>) =>
      Effect.map(
        Effect.zipRight(holdOpen, Queue.takeUpTo(queue, options.maxBatchSize - 1)),
        (rest) => Array.prepend(Chunk.toReadonlyArray(rest), first),
      )

    // The commit and its timer run as daemon fibers, out of reach of the writer's interruption
    // (a batch being committed finishes even when the scope closes). On expiry the callers are
    // answered at once and the commit is interrupted in the background, since a store that
    // hangs may hang its rollback too.
    const boundedCommit = (items: Array.NonEmptyReadonlyArray<I>) =>
      Effect.gen(function* () {
        const outcome = yield* Deferred.make<ReadonlyArray<A>, E | GroupCommitTimedOut>()
        const committing = yield* Effect.forkDaemon(
          Effect.interruptible(Effect.intoDeferred(commit(items), outcome)),
        )
        const timer = yield* Effect.forkDaemon(
          Effect.interruptible(
            Effect.zipRight(
              Effect.sleep(commitTimeout),
              Effect.zipRight(
                Deferred.fail(outcome, new GroupCommitTimedOut({ timeout: commitTimeout })),
                Fiber.interruptFork(committing),
              ),
            ),
          ),
        )
        return yield* Effect.ensuring(Deferred.await(outcome), Fiber.interruptFork(timer))
      })

    const settle = (batch: Array.NonEmptyReadonlyArray<Pending<I, A, E>>) =>
      Effect.flatMap(
        Effect.exit(boundedCommit(Array.map(batch, (pending) => pending.item))),
        (exit): Effect.Effect<void> => {
          if (Exit.isFailure(exit)) {
            return Effect.forEach(
              batch,
              (pending) => Deferred.failCause(pending.result, exit.cause),
              { discard: true },
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
          Effect.flatMap(gather(first), (batch) => Effect.zipRight(observe(batch), settle(batch))),
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
      Effect.flatMap(Deferred.make<A, E | GroupCommitTimedOut>(), (result) =>
        Effect.flatMap(
          Queue.offer(queue, { item, result }),
          (queued): Effect.Effect<A, E | GroupCommitTimedOut | GroupCommitQueueFull> =>
            queued
              ? Deferred.await(result)
              : Effect.fail(new GroupCommitQueueFull({ maxWaiting: options.maxWaiting })),
        ),
      )
  })
