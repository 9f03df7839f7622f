import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs"
import path from "node:path"

const root = "/sys/fs/cgroup/cpu"

/**
 * A CPU quota for the processes put in it, as a container's CPU limit is: a cgroup v1 `cpu` group
 * of its own under /sys/fs/cgroup/cpu (`cpu.cfs_quota_us` over `cpu.cfs_period_us`).
 */
export interface CpuQuota {
  /** Moves a process (every thread of it) into the group. */
  readonly add: (pid: number) => void
  /** Periods in which the group was throttled, and for how long in all, since it was made. */
  readonly throttling: () => {
    readonly periods: number
    readonly throttled: number
    readonly seconds: number
  }
  /** Holds the group to `cores` of one core from now on. */
  readonly hold: (cores: number) => void
  /** Moves what is left in it back to the root group, and removes it. */
  readonly remove: () => void
}

/** cgroup v1's largest `cpu.shares`. */
const heaviestShares = 262_144

const made = new Set<string>()
let groups = 0

/** How long removing a group waits for processes just killed to be gone from it. */
const exitWaitMs = 2_000
const pause = new Int32Array(new SharedArrayBuffer(4))

const removeGroup = (directory: string): void => {
  if (!existsSync(directory)) return
  for (let waitedMs = 0; ; waitedMs += 10) {
    for (const pid of readFileSync(path.join(directory, "cgroup.procs"), "utf8").split("\n")) {
      if (pid === "") continue
      try {
        writeFileSync(path.join(root, "cgroup.procs"), pid)
      } catch {
        // The process has exited meanwhile.
      }
    }
    try {
      rmdirSync(directory)
      break
    } catch (error) {
      // Removal can fail while a process killed a moment ago (a runner stopping its children on
      // Ctrl-C) is still being torn down: an interrupted bench once left its groups behind. An
      // exit handler can only wait synchronously.
      if (waitedMs >= exitWaitMs) throw error
      Atomics.wait(pause, 0, 0, 10)
    }
  }
  made.delete(directory)
}

// A test or bench that fails or is interrupted midway must not leave its group behind.
process.on("exit", () => {
  for (const directory of made) {
    try {
      removeGroup(directory)
    } catch (error) {
      process.stderr.write(`could not remove the CPU group ${directory}: ${String(error)}\n`)
    }
  }
})

/** Why no CPU quota can be made here (not root, no cgroup v1 `cpu` controller), if so. */
export const cpuQuotaUnavailable = (): string | undefined => {
  if (process.getuid?.() !== 0) return "holding a process to a CPU quota needs root (cgroup v1)"
  if (!existsSync(path.join(root, "cpu.cfs_quota_us")))
    return `no cgroup v1 cpu controller is mounted at ${root}`
  return undefined
}

const periodMicros = 100_000

const hold = (directory: string, cores: number): void =>
  writeFileSync(path.join(directory, "cpu.cfs_quota_us"), String(Math.round(cores * periodMicros)))

/**
 * A group holding its processes to `cores` of one core (0.1: a tenth), or why none can be made
 * here (see `cpuQuotaUnavailable`, or the kernel refused it).
 */
export const cpuQuota = (name: string, cores: number): CpuQuota | string => {
  const unavailable = cpuQuotaUnavailable()
  if (unavailable !== undefined) return unavailable
  const directory = path.join(root, `${name}-${process.pid}-${++groups}`)
  try {
    mkdirSync(directory)
    made.add(directory)
    writeFileSync(path.join(directory, "cpu.cfs_period_us"), String(periodMicros))
    hold(directory, cores)
    // The heaviest weight there is: what the group may use it gets, however busy its neighbours
    // (other suites, a load generator), as a container's CPU request is honoured beside its limit.
    writeFileSync(path.join(directory, "cpu.shares"), String(heaviestShares))
  } catch (error) {
    if (made.has(directory)) removeGroup(directory)
    return `cannot make a cgroup at ${directory}: ${error instanceof Error ? error.message : String(error)}`
  }
  const stat = (): Readonly<Record<string, number>> =>
    Object.fromEntries(
      readFileSync(path.join(directory, "cpu.stat"), "utf8")
        .split("\n")
        .filter((line) => line !== "")
        .map((line) => {
          const [key = "", value = "0"] = line.split(" ")
          return [key, Number(value)]
        }),
    )
  return {
    add: (pid) => writeFileSync(path.join(directory, "cgroup.procs"), String(pid)),
    throttling: () => {
      const values = stat()
      return {
        periods: values["nr_periods"] ?? 0,
        throttled: values["nr_throttled"] ?? 0,
        seconds: (values["throttled_time"] ?? 0) / 1e9,
      }
    },
    hold: (cores) => hold(directory, cores),
    remove: () => removeGroup(directory),
  }
}
