import { readFileSync } from "node:fs"

/** Linux's counters for the calling thread: nanoseconds on a CPU, nanoseconds waiting for one. */
const schedstat = "/proc/thread-self/schedstat"

const fromSchedstat = (): number | undefined => {
  try {
    const [running = "", waiting = ""] = readFileSync(schedstat, "utf8").split(" ")
    const total = (Number(running) + Number(waiting)) / 1e6
    return Number.isFinite(total) ? total : undefined
  } catch {
    return undefined
  }
}

/** Where the scheduler's counters cannot be read: the process's CPU time alone. */
const fromCpuUsage = (): number => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** The counter `loopThreadRunnableMs` reads, chosen by its first call. */
let reader: (() => number) | undefined

/**
 * How long the calling thread (the event loop's, called from it) has wanted a CPU, in
 * milliseconds since some fixed moment: the time it ran, and the time it was ready to run and
 * waited for a CPU (a neighbour holding it, or a CPU quota's freeze). Time it spent blocked in a
 * system call (a synchronous `fsync`, a read from a slow disk) or idle, waiting for I/O, is not
 * in it. Linux counts both in `/proc/thread-self/schedstat`; elsewhere this is the process's CPU
 * time, which leaves the wait for a CPU out. Which of the two is decided by the first call, so
 * that two readings are always of the same counter; should the counters fail to read after
 * that, NaN, which compares false with anything (a difference with it is no time at all).
 *
 * One read costs a few microseconds: for occasional looks, not one per request.
 */
export const loopThreadRunnableMs = (): number => {
  reader ??= fromSchedstat() === undefined ? fromCpuUsage : () => fromSchedstat() ?? Number.NaN
  return reader()
}
