import { Array, Data, Duration, Effect, Exit, Runtime, type Scope, type Tracer } from "effect"

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

/** Where a traced item came from, and the span its caller waits in. */
interface ItemTrace {
  /** The caller's span when it submitted the item: the batch's parent, or one of its links. */
  readonly span: Tracer.AnySpan
  /** `group-commit.wait`, from the item's submission until its caller is answered. */
  readonly wait: Tracer.Span
  /** The caller's tracer, which the writer fiber may not have (it was forked when the store opened). */
  readonly tracer: Tracer.Tracer
}

/** An item waiting for its batch, with the callback that answers its caller. */
interface Pending<I, A, E> {
  readonly item: I
  readonly answer: (outcome: Effect.Effect<A, E | GroupCommitTimedOut>) => void
  /** Set only when the item was submitted inside a sampled span. */
  readonly trace: ItemTrace | undefined
}

const waitSpanOptions: Tracer.SpanOptions = { kind: "internal", captureStackTrace: false }

/**
 * The traces of a batch's traced items, in the batch's order; `undefined` when none was traced,
 * so that an untraced batch allocates nothing for tracing.
 */
const tracesOf = <I, A, E>(
  batch: ReadonlyArray<Pending<I, A, E>>,
): Array.NonEmptyArray<ItemTrace> | undefined => {
  let traces: Array<ItemTrace> | undefined
  for (const pending of batch) {
    if (pending.trace !== undefined) (traces ??= []).push(pending.trace)
  }
  return traces !== undefined && Array.isNonEmptyArray(traces) ? traces : undefined
}

/**
 * Runs a batch's commit inside one `group-commit.batch` span. Its parent is the span of the first
 * traced item, so a create committed alone finds its own SQL statements under it; every other
 * traced item's span is a link, since a span has one parent and the batch serves several
 * traces. Each item's wait span is told which batch took it (`petstore.batch.span_id` and
 * `petstore.batch.trace_id`, the batch being in another trace when the item was not first) and
 * when that batch started committing, so a trace shows the time spent queued apart from the
 * commit.
 */
const inBatchSpan = <A, E>(
  size: number,
  traces: Array.NonEmptyReadonlyArray<ItemTrace>,
  commit: Effect.Effect<A, E>,
): Effect.Effect<A, E> => {
  const first = Array.headNonEmpty(traces)
  const linked = new Set<Tracer.AnySpan>([first.span])
  const links: Array<Tracer.SpanLink> = []
  for (const { span } of traces) {
    if (linked.has(span)) continue
    linked.add(span)
    links.push({ _tag: "SpanLink", span, attributes: {} })
  }
  const batchSpan: Tracer.SpanOptions = {
    parent: first.span,
    links,
    attributes: { "petstore.batch.size": size },
    kind: "internal",
    captureStackTrace: false,
  }
  return Effect.withTracer(
    Effect.useSpan("group-commit.batch", batchSpan, (batch) =>
      Effect.zipRight(
        Effect.clockWith((clock) =>
          Effect.sync(() => {
            const now = clock.unsafeCurrentTimeNanos()
            for (const { wait } of traces) {
              // A caller interrupted while it waited has ended its span already.
              if (wait.status._tag === "Ended") continue
              wait.attribute("petstore.batch.span_id", batch.spanId)
              wait.attribute("petstore.batch.trace_id", batch.traceId)
              wait.attribute("petstore.batch.size", size)
              wait.event("group-commit.batch.started", now)
            }
          }),
        ),
        // The SQL statements' spans are made in the commit's fibers, which inherit this parent.
        Effect.withParentSpan(commit, batch),
      ),
    ),
    first.tracer,
  )
}

/**
 * Commits items in batches, so concurrent callers share one transaction and one fsync. The first
 * item to arrive while no batch is being committed opens a batch (for `window`, or one turn of
 * the event loop); then every item waiting, up to `maxBatchSize`, is committed together, and
 * items arriving meanwhile wait for the next batch, which opens once this one is answered (at
 * once if this one was full: what it left behind has waited long enough).
 * `commit` answers with one result per item, in the items' order; each caller resumes only once
 * its batch has committed, and every caller of a failed batch gets its failure.
 *
 * Returns the function that submits one item. When the scope closes, a batch being committed
 * finishes and callers still waiting are interrupted.
 *
 * The batches are driven by plain timers and callbacks, each batch's commit running in one fiber
 * of its own. With a commit that does nothing, a writer fiber, a `Deferred` per item and forked
 * timers cost about 69 µs of CPU a batch, against 7 µs this way; at one connection every create
 * is a batch of its own, so it paid all of that.
 *
 * Traces: an item submitted inside a sampled span waits in a `group-commit.wait` span, and a
 * batch holding at least one such item commits inside a `group-commit.batch` span (see
 * `inBatchSpan`), so the commit's SQL statements appear in the trace of the create they served.
 * A batch of untraced items is committed with the tracer off, so its statements make no spans.
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
    const run = Runtime.runCallback(yield* Effect.runtime<never>())
    const waiting: Array<Pending<I, A, E>> = []
    let closed = false
    /** A batch is open (its timer set) or being committed: items arriving wait for the next. */
    let busy = false
    /** Told when no batch is open or committing any more: the closing scope waits for it. */
    const whenIdle: Array<() => void> = []
    const becomeIdle = () => {
      busy = false
      for (const resume of whenIdle.splice(0)) resume()
    }

    const windowMillis = Duration.toMillis(options.window)
    const commitTimeout = Duration.decode(options.commitTimeout)
    const timeoutMillis = Duration.toMillis(commitTimeout)

    /**
     * Opens a batch for the items waiting: after `window` (one turn) for items that just arrived,
     * so that others arriving with them join; at once, still in this turn, for those a full batch
     * left behind, which were waiting before it began. Holding those for another turn each made
     * a queue inside the process whenever more than `maxBatchSize` arrived in a turn, as a loaded
     * loop under a CPU quota reads a period's worth a turn: creates at twice capacity spent up to
     * 2.5 s there after admission control had let them in, and hundreds a second timed out.
     */
    const openBatch = (leftBehind = false) => {
      if (busy || closed || waiting.length === 0) return
      busy = true
      if (leftBehind) process.nextTick(commitWaiting)
      else if (windowMillis === 0) setImmediate(commitWaiting)
      else setTimeout(commitWaiting, windowMillis)
    }

    const answerAll = (
      batch: ReadonlyArray<Pending<I, A, E>>,
      exit: Exit.Exit<ReadonlyArray<A>, E>,
    ) => {
      if (Exit.isFailure(exit)) {
        for (const pending of batch) pending.answer(Exit.failCause(exit.cause))
        return
      }
      const results = exit.value
      if (results.length !== batch.length) {
        const defect = new Error(
          `group commit: ${batch.length} items committed but ${results.length} results returned`,
        )
        for (const pending of batch) pending.answer(Exit.die(defect))
        return
      }
      for (const [pending, result] of Array.zip(batch, results))
        pending.answer(Exit.succeed(result))
    }

    // On expiry the callers are answered at once and the commit is interrupted in the
    // background, since a store that hangs may hang its rollback too; the next batch opens.
    // A commit still running when the scope closes finishes, its callers answered, before the
    // scope has closed.
    const commitWaiting = () => {
      const batch = waiting.splice(0, options.maxBatchSize)
      if (closed || !Array.isNonEmptyArray(batch)) return becomeIdle()
      try {
        options.observeBatchSize?.(batch.length)
      } catch {
        // Metrics must not stop commits.
      }
      let answered = false
      const settle = (answer: () => void) => {
        if (answered) return
        answered = true
        clearTimeout(timer)
        becomeIdle()
        answer()
        openBatch(batch.length === options.maxBatchSize)
      }
      const timer = setTimeout(() => {
        const timedOut = Exit.fail(new GroupCommitTimedOut({ timeout: commitTimeout }))
        settle(() => {
          for (const pending of batch) pending.answer(timedOut)
          cancel()
        })
      }, timeoutMillis)
      const committed = commit(Array.map(batch, (pending) => pending.item))
      const traces = tracesOf(batch)
      const cancel = run(
        // A batch no traced caller waits for makes no span at all: its statements would
        // otherwise start traces of their own, unrelated to any request.
        traces === undefined
          ? Effect.withTracerEnabled(committed, false)
          : inBatchSpan(batch.length, traces, committed),
        { onExit: (exit) => settle(() => answerAll(batch, exit)) },
      )
    }

    // Closing interrupts the callers still waiting, then waits for the batch in flight (at most
    // `commitTimeout`), so that what the scope closes next, the database, is open for its commit.
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Effect.sync(() => {
          closed = true
          for (const pending of waiting.splice(0)) pending.answer(Effect.interrupt)
        }),
        Effect.async<void>((resume) => {
          if (!busy) return resume(Effect.void)
          whenIdle.push(() => resume(Effect.void))
        }),
      ),
    )

    const enqueue = (item: I, trace: ItemTrace | undefined) =>
      Effect.async<A, E | GroupCommitTimedOut | GroupCommitQueueFull>((answer) => {
        if (closed) return answer(Effect.interrupt)
        if (waiting.length >= options.maxWaiting)
          return answer(Effect.fail(new GroupCommitQueueFull({ maxWaiting: options.maxWaiting })))
        waiting.push({ item, answer, trace })
        openBatch()
      })

    // An item submitted outside a sampled span (tracing off, or this trace not sampled) costs one
    // look at the fiber's current span: no span, no clock, no allocation for tracing.
    return (item: I) =>
      Effect.withFiberRuntime<A, E | GroupCommitTimedOut | GroupCommitQueueFull>((fiber) => {
        const span = fiber.currentSpan
        if (span === undefined || !span.sampled) return enqueue(item, undefined)
        const tracer = fiber.currentTracer
        return Effect.useSpan("group-commit.wait", waitSpanOptions, (wait) =>
          enqueue(item, { span, wait, tracer }),
        )
      })
  })
