import { Limit, PetRepository, StorageUnavailable } from "@petstore/core"
import { Cause, Duration, Effect, Exit, Option } from "effect"
import type { PetRuntime } from "../vocabulary/runtime.js"
import { describeCause, type Logger } from "../vocabulary/logger.js"
import { discardMetrics, type MetricsRecorder } from "./metrics.js"

export type Readiness =
  { readonly ready: true } | { readonly ready: false; readonly reason: string }

export interface ReadinessOptions {
  /** The longest the probe may take before storage counts as not answering; 2 s unless given. */
  readonly timeout?: Duration.DurationInput
  /** How long an answer is reused, so that probes hit storage at most this often; 1 s unless given. */
  readonly reuseFor?: Duration.DurationInput
}

/**
 * The cheapest question that goes the way a request goes: a page of one pet, through the
 * repository's own connection pool and error mapping. It answers what a request would meet now,
 * and works on any adapter (the in-memory one is always ready).
 */
const probe = (timeout: Duration.Duration) =>
  Effect.flatMap(PetRepository, (pets) =>
    pets.list({ status: Option.none(), afterId: Option.none(), limit: Limit.make(1) }),
  ).pipe(
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: () =>
        new StorageUnavailable({
          cause: new Error(`no answer within ${Duration.format(timeout)}`),
        }),
    }),
  )

const reasonOf = (cause: Cause.Cause<StorageUnavailable>): string =>
  Option.match(Cause.failureOption(cause), {
    onNone: () => describeCause(Cause.squash(cause)),
    onSome: (failure) => describeCause(failure.cause),
  })

/**
 * Whether storage answers now. Callers at the same moment share one probe, and an answer is reused
 * for `reuseFor`: a client calling `/readyz` in a loop cannot load the store. A probe that fails
 * is logged (through `log`, the logger of the request that ran it) and counted.
 */
export const storageReadiness = (
  runtime: PetRuntime,
  metrics: MetricsRecorder = discardMetrics,
  options: ReadinessOptions = {},
): ((log: Logger) => Promise<Readiness>) => {
  const timeout = Duration.decode(options.timeout ?? Duration.seconds(2))
  const reuseMs = Duration.toMillis(options.reuseFor ?? Duration.seconds(1))
  let last: { readonly at: number; readonly readiness: Readiness } | undefined
  let probing: Promise<Readiness> | undefined

  const run = async (log: Logger): Promise<Readiness> => {
    const exit = await runtime.runPromiseExit(probe(timeout))
    const readiness: Readiness = Exit.isSuccess(exit)
      ? { ready: true }
      : { ready: false, reason: reasonOf(exit.cause) }
    if (!readiness.ready) {
      metrics.recordStorageError("readyz")
      log.warn({ cause: readiness.reason }, "storage not ready")
    }
    last = { at: performance.now(), readiness }
    return readiness
  }

  return (log) => {
    if (last !== undefined && performance.now() - last.at < reuseMs) {
      return Promise.resolve(last.readiness)
    }
    probing ??= run(log).finally(() => (probing = undefined))
    return probing
  }
}
