import { spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import os from "node:os"
import { performance } from "node:perf_hooks"

/**
 * The environment of this process without what npm and node:test set for it: a child `npm`
 * would otherwise take the monorepo's `npm_config_*`, and a child `node --test` would report to
 * this test runner instead of printing its results. `NODE_OPTIONS` stays here too: the fresh
 * projects run on plain Node.
 */
export const cleanEnv = (extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^npm_/i.test(name) && name !== "NODE_TEST_CONTEXT" && name !== "NODE_OPTIONS",
    ),
  ),
  ...extra,
})

export interface RunOptions {
  readonly cwd: string
  /** The process (and its children) is killed after this long. */
  readonly timeoutMs: number
  readonly env?: Readonly<Record<string, string>>
  /**
   * Runs at a lower CPU priority (nice 10, inherited by what it starts), so that the step on the
   * critical path (compiling better-sqlite3) keeps a core of its own.
   */
  readonly lowPriority?: boolean
}

export interface Finished {
  /** The exit code; null when the process was killed. */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly seconds: number
  readonly timedOut: boolean
}

/** Kills the process group of a child started with `detached: true`. */
const killGroup = (child: ChildProcess): void => {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, "SIGKILL")
  } catch {
    // Already gone.
  }
}

const collect = (child: ChildProcess) => {
  let stdout = ""
  let stderr = ""
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  return { stdout: () => stdout, stderr: () => stderr }
}

/** Runs a command to its end, or kills it (with whatever it started) after `timeoutMs`. */
export const run = async (
  command: string,
  args: ReadonlyArray<string>,
  options: RunOptions,
): Promise<Finished> => {
  const started = performance.now()
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: cleanEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  })
  if (options.lowPriority === true && child.pid !== undefined) {
    os.setPriority(child.pid, 10)
  }
  const output = collect(child)
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    killGroup(child)
  }, options.timeoutMs)
  try {
    const [code] = await once(child, "close")
    return {
      code: typeof code === "number" ? code : null,
      stdout: output.stdout(),
      stderr: output.stderr(),
      seconds: (performance.now() - started) / 1000,
      timedOut,
    }
  } finally {
    clearTimeout(timer)
  }
}

/** Fails with the command's output unless it exited with 0. */
export const runOk = async (
  command: string,
  args: ReadonlyArray<string>,
  options: RunOptions,
): Promise<Finished> => {
  const finished = await run(command, args, options)
  if (finished.code !== 0) {
    const how = finished.timedOut
      ? `timed out after ${options.timeoutMs} ms`
      : `exited ${finished.code}`
    throw new Error(
      `${command} ${args.join(" ")} ${how} in ${options.cwd}\n${finished.stdout}\n${finished.stderr}`,
    )
  }
  return finished
}

export interface Started {
  /** Resolves with the first line of standard output that matches, or rejects after `ms`. */
  readonly lineMatching: (pattern: RegExp, ms: number) => Promise<string>
  /** Sends SIGTERM and waits `ms` for the exit; then kills it. */
  readonly stop: (ms: number) => Promise<{ readonly code: number | null; readonly killed: boolean }>
  readonly output: () => string
}

/** Starts a long-running process that starts none of its own, such as a server. */
export const start = (
  command: string,
  args: ReadonlyArray<string>,
  options: Omit<RunOptions, "timeoutMs" | "lowPriority">,
): Started => {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: cleanEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  })
  const output = collect(child)
  const exited = once(child, "exit")
  return {
    lineMatching: (pattern, ms) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`no line matching ${pattern} in ${ms} ms:\n${output.stdout()}`))
        }, ms)
        const look = () => {
          const line = output
            .stdout()
            .split("\n")
            .find((candidate) => pattern.test(candidate))
          if (line === undefined) return
          clearTimeout(timer)
          child.stdout?.off("data", look)
          resolve(line)
        }
        child.stdout?.on("data", look)
        void exited.then(() => {
          clearTimeout(timer)
          reject(
            new Error(`exited before printing ${pattern}:\n${output.stdout()}${output.stderr()}`),
          )
        })
        look()
      }),
    stop: async (ms) => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), ms)
      const [code, signal] = await exited
      clearTimeout(timer)
      return { code: typeof code === "number" ? code : null, killed: signal === "SIGKILL" }
    },
    output: () => `${output.stdout()}${output.stderr()}`,
  }
}
