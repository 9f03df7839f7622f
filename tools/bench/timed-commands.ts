/**
 * Commands timed as an operator runs them, each pinned to one core: the wall time from start to
 * exit, the command's own CPU time (user + system of every thread, from GNU time's rusage), and,
 * for a command working on one PostgreSQL database, the CPU time of that database's backend
 * processes, sampled from /proc while it runs. A command and what it started are killed on a
 * timeout, and when the runner exits.
 *
 * They stay in the runner's session, as the servers do: with the kernel's autogroups (one
 * scheduling group per session), a command in a session of its own (`detached`) on a core where
 * the server was busy got about 1 % of it and never finished.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { clockTicks, cpuTicks } from "@petstore/test-support/process-cpu"

export const gnuTime = "/usr/bin/time"

export interface Timed {
  readonly wallSeconds: number
  /** The command's CPU time, user + system. */
  readonly cpuSeconds: number
  /** The CPU time of the backends serving the database named in `runTimed`'s `database`. */
  readonly backendCpuSeconds: number | undefined
  readonly stdout: string
}

const running = new Set<ChildProcess>()

/** The processes `pid` started, and theirs (from /proc's `children` lists). */
const descendants = (pid: number): ReadonlyArray<number> => {
  try {
    const children = readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, "utf8")
        .split(" ")
        .filter((child) => child !== "")
        .map(Number),
    )
    return children.flatMap((child) => [child, ...descendants(child)])
  } catch {
    return []
  }
}

/** Kills a child and everything it started (GNU time's child is not in its own group). */
const killTree = (child: ChildProcess) => {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  for (const pid of [...descendants(child.pid), child.pid]) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // Gone already.
    }
  }
}

process.on("exit", () => {
  for (const child of running) killTree(child)
})

const tracked = (child: ChildProcess) => {
  running.add(child)
  child.once("close", () => running.delete(child))
  return child
}

/** Spawns `command` (stdout ignored, stderr piped), killed if the runner exits first. */
export const spawnTracked = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): ChildProcess =>
  tracked(
    spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ["ignore", "ignore", "pipe"],
    }),
  )

/** `ps` names a backend `postgres: <cluster>: <user> <database> <client> <state>`. */
const isBackendOf = (cmdline: string, database: string) =>
  cmdline.startsWith("postgres: ") && cmdline.replace(/\0/g, " ").includes(` ${database} `)

/**
 * Follows the CPU time of the backends of `database` until `stop`: the processes are looked for
 * every 50 ms, their /proc/<pid>/stat read every 10 ms (a backend's last 10 ms can be missed).
 */
const watchBackends = (database: string) => {
  const latest = new Map<number, number>()
  let sinceScan = Number.POSITIVE_INFINITY
  const sample = () => {
    if (sinceScan >= 5) {
      sinceScan = 0
      for (const entry of readdirSync("/proc")) {
        const pid = Number(entry)
        if (!Number.isInteger(pid) || latest.has(pid)) continue
        try {
          if (isBackendOf(readFileSync(`/proc/${pid}/cmdline`, "latin1"), database))
            latest.set(pid, 0)
        } catch {
          // It exited meanwhile.
        }
      }
    }
    sinceScan++
    for (const pid of latest.keys()) {
      try {
        const { user, system } = cpuTicks(pid)
        latest.set(pid, user + system)
      } catch {
        // Gone: its last reading stays.
      }
    }
  }
  sample()
  const timer = setInterval(sample, 10)
  return () => {
    clearInterval(timer)
    sample()
    return [...latest.values()].reduce((sum, ticks) => sum + ticks, 0) / clockTicks
  }
}

const timeLine = /^petstore-bench-time (\S+) (\S+)$/m

/**
 * Runs `command` under `taskset -c <core>` and GNU time; refuses a non-zero exit, with the end of
 * what it wrote to stderr.
 */
export const runTimed = (options: {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly core: number
  readonly timeoutSeconds: number
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  /** A PostgreSQL database the command works on, whose backends' CPU time is read. */
  readonly database?: string
}): Promise<Timed> =>
  new Promise((resolve, reject) => {
    const stopWatching =
      options.database === undefined ? undefined : watchBackends(options.database)
    const started = performance.now()
    const child = tracked(
      spawn(
        "taskset",
        [
          "-c",
          String(options.core),
          gnuTime,
          "-f",
          "petstore-bench-time %U %S",
          options.command,
          ...options.args,
        ],
        {
          cwd: options.cwd,
          env: { ...process.env, ...options.env },
          stdio: ["ignore", "pipe", "pipe"],
        },
      ),
    )
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => killTree(child), options.timeoutSeconds * 1000)
    child.once("error", (error) => {
      clearTimeout(timer)
      stopWatching?.()
      reject(error)
    })
    child.once("close", (code, signal) => {
      const wallSeconds = (performance.now() - started) / 1000
      clearTimeout(timer)
      const backendCpuSeconds = stopWatching?.()
      const times = timeLine.exec(stderr)
      const what = `${options.command} ${options.args.join(" ")}`
      if (code !== 0 || times === null) {
        const tail = stderr.trim().split("\n").slice(-6).join("\n")
        reject(
          new Error(
            signal === "SIGKILL"
              ? `${what} did not finish within ${options.timeoutSeconds} s`
              : `${what} exited ${signal ?? code}:\n${tail}`,
          ),
        )
        return
      }
      resolve({
        wallSeconds,
        cpuSeconds: Number(times[1]) + Number(times[2]),
        backendCpuSeconds,
        stdout,
      })
    })
  })
