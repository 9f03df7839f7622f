import type { Effect, Exit, ManagedRuntime } from "effect"

/**
 * Runs an effect on the runtime and gives its exit: at once when the effect completes without
 * waiting (the in-memory store does), else once it completes. Cheaper per request than
 * `runPromiseExit`, which always goes through a promise and a further turn.
 */
export const runToExit = <A, E, R, ER>(
  runtime: ManagedRuntime.ManagedRuntime<R, ER>,
  effect: Effect.Effect<A, E, R>,
): Exit.Exit<A, E | ER> | Promise<Exit.Exit<A, E | ER>> => {
  const fiber = runtime.runFork(effect)
  const exit = fiber.unsafePoll()
  return exit ?? new Promise((resolve) => fiber.addObserver(resolve))
}
