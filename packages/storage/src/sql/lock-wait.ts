import { Duration, Effect, Schedule } from "effect"
import { driverCode } from "./driver-code.js"

/** How long an operation waits for a lock another connection holds, unless told otherwise. */
export const defaultLockWait = Duration.seconds(5)

/**
 * SQLite's answer when another connection holds a lock the statement needs (`SQLITE_BUSY`,
 * `SQLITE_LOCKED` and their extended codes, `SQLITE_BUSY_SNAPSHOT` included: retrying the whole
 * operation starts a fresh transaction). PostgreSQL waits for its locks in the server.
 */
const isLockHeld = (error: unknown): boolean => {
  const code = driverCode(error)
  return typeof code === "string" && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code)
}

/**
 * Retries `effect` while another connection holds the lock it needs, for at most `wait`, sleeping
 * between tries (1 ms, doubling to 25 ms, jittered) rather than blocking: better-sqlite3 would wait
 * for a lock (`busy_timeout`) synchronously, stopping the event loop, health checks and reads with
 * it. For a connection opened with `busy_timeout = 0`, which reports a held lock at once.
 */
export const waitingForLocks =
  (wait: Duration.DurationInput) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.retry(effect, {
      while: isLockHeld,
      schedule: Schedule.exponential(Duration.millis(1)).pipe(
        Schedule.union(Schedule.spaced(Duration.millis(25))),
        Schedule.jittered,
        Schedule.upTo(wait),
      ),
    })
