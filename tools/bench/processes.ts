/**
 * The processes of an HTTP benchmark: servers pinned to one core, the load worker pinned to the
 * other, what /proc says about them, and the guarantee that none outlives the runner.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { createInterface } from "node:readline"
import { Schema } from "effect"
import { clockTicks, cpuTicks } from "@petstore/test-support/process-cpu"
import { LoadCounts, type LoadPlan, type WorkerCommand } from "./load-plan.js"

const children = new Set<ChildProcess>()

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null

/** Kills every child still running (the runner is failing or exiting). */
export const killChildren = (): void => {
  for (const child of children) if (running(child)) child.kill("SIGKILL")
}

process.on("exit", killChildren)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    process.stderr.write(`\nhttp-bench: ${signal}, stopping every child process\n`)
    killChildren()
    process.exit(130)
  })
}

const track = (child: ChildProcess): ChildProcess => {
  children.add(child)
  child.on("exit", () => children.delete(child))
  return child
}

/** VmRSS of a process, in KiB. */
export const residentKiB = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/^VmRSS:\s+([0-9]+) kB$/m.exec(status)?.[1] ?? Number.NaN)
}

export interface Server {
  readonly name: string
  readonly pid: number
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Where it answers `/healthz` and `/readyz` apart (`PETSTORE_PROBE_PORT`), if it does. */
  readonly probeOrigin: string | undefined
  /** The last lines it wrote, for error messages. */
  readonly logTail: () => string
  readonly stop: () => Promise<void>
}

const Announcement = Schema.parseJson(
  Schema.Struct({
    message: Schema.Literal("petstore listening"),
    url: Schema.String,
    probes: Schema.optional(Schema.String),
  }),
)
const announcedUrl = Schema.decodeUnknownOption(Announcement)

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (!running(child)) resolve()
    else child.once("exit", () => resolve())
  })

export interface ServerCommand {
  readonly name: string
  /** Node's arguments: the script, after any `--import tsx`. */
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
}

/**
 * Starts `node <args>` under `taskset -c <core>` and waits for its `"petstore listening"` line
 * (stdout or stderr), which names the URL it listens on.
 */
export const startServer = (command: ServerCommand, core: number): Promise<Server> => {
  const child = track(
    spawn("taskset", ["-c", String(core), process.execPath, ...command.args], {
      cwd: command.cwd,
      env: { ...process.env, ...command.env },
      stdio: ["ignore", "pipe", "pipe"],
    }),
  )
  const tail: Array<string> = []
  const logTail = () => tail.join("\n")
  return new Promise<Server>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(
        new Error(`${command.name} did not say "petstore listening" within 60 s:\n${logTail()}`),
      )
    }, 60_000)
    const onLine = (line: string) => {
      tail.push(line)
      if (tail.length > 40) tail.shift()
      const announced = announcedUrl(line)
      if (announced._tag === "None" || child.pid === undefined) return
      clearTimeout(timer)
      const pid = child.pid
      resolve({
        name: command.name,
        pid,
        origin: new URL(announced.value.url).origin,
        probeOrigin: announced.value.probes,
        logTail,
        stop: async () => {
          if (!running(child)) return
          child.kill("SIGTERM")
          const killer = setTimeout(() => child.kill("SIGKILL"), 15_000)
          await exited(child)
          clearTimeout(killer)
        },
      })
    }
    if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine)
    if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(
        new Error(`${command.name} exited (${signal ?? code}) before listening:\n${logTail()}`),
      )
    })
  })
}

export interface LoadResult {
  readonly counts: LoadCounts
  /** Server CPU (user + system) over the measured run. */
  readonly cpuSeconds: number
  /** The part of it spent in the kernel (system time). */
  readonly systemSeconds: number
  /** Wall time of the measured run as the runner saw it. */
  readonly wallSeconds: number
}

const workerScript = fileURLToPath(new URL("./load-worker.ts", import.meta.url))
const WorkerEvent = Schema.parseJson(
  Schema.Union(
    Schema.Struct({ event: Schema.Literal("ready") }),
    Schema.Struct({ event: Schema.Literal("done"), counts: LoadCounts }),
  ),
)
const workerEvent = Schema.decodeUnknownOption(WorkerEvent)
type WorkerEvent = typeof WorkerEvent.Type

/** The load generator: one process, pinned to its core, that runs one plan at a time. */
export interface LoadWorker {
  /**
   * Runs a plan against `server`: the warm-up, then the measured run, with the server's CPU
   * time read when it starts and when it ends. `duringRun` is called every second meanwhile.
   */
  readonly run: (plan: LoadPlan, server: Server, duringRun?: () => void) => Promise<LoadResult>
  readonly stop: () => Promise<void>
}

/** Starts the load worker under `taskset -c <core>`. */
export const startLoadWorker = (core: number): LoadWorker => {
  const worker = track(
    spawn("taskset", ["-c", String(core), process.execPath, "--import", "tsx", workerScript], {
      cwd: fileURLToPath(new URL(".", import.meta.url)),
      stdio: ["pipe", "pipe", "inherit"],
    }),
  )
  if (worker.stdout === null || worker.stdin === null) throw new Error("worker without pipes")
  const stdin = worker.stdin
  // A write to a worker that died fails here; its exit is what the runner reports.
  stdin.on("error", () => {})
  const send = (command: WorkerCommand) => stdin.write(`${JSON.stringify(command)}\n`)
  let awaiting: ((event: WorkerEvent | Error) => void) | undefined
  let exit: Error | undefined
  createInterface({ input: worker.stdout }).on("line", (line) => {
    const event = workerEvent(line)
    if (event._tag === "Some") awaiting?.(event.value)
  })
  worker.once("exit", (code, signal) => {
    exit = new Error(`the load worker exited (${signal ?? code}) before its result`)
    awaiting?.(exit)
  })
  const next = (limitMs: number) =>
    new Promise<WorkerEvent>((resolve, reject) => {
      if (exit !== undefined) return reject(exit)
      const timer = setTimeout(() => {
        worker.kill("SIGKILL")
        reject(new Error(`the load worker did not answer within ${limitMs / 1000} s`))
      }, limitMs)
      awaiting = (event) => {
        clearTimeout(timer)
        awaiting = undefined
        if (event instanceof Error) reject(event)
        else resolve(event)
      }
    })

  const unexpected = (event: WorkerEvent, expected: WorkerEvent["event"]) =>
    new Error(`the load worker said ${event.event}, not ${expected}`)

  const run = async (plan: LoadPlan, server: Server, duringRun: () => void = () => {}) => {
    send({ plan })
    const ready = await next((plan.warmupSeconds + 60) * 1000)
    if (ready.event !== "ready") throw unexpected(ready, "ready")
    const startTicks = cpuTicks(server.pid)
    const startTime = performance.now()
    const sampler = setInterval(duringRun, 1000)
    send("go")
    const measuredLimit = plan.amount === undefined ? plan.seconds : 600
    const done = await next((measuredLimit + 60) * 1000).finally(() => clearInterval(sampler))
    if (done.event !== "done") throw unexpected(done, "done")
    const endTicks = cpuTicks(server.pid)
    const user = endTicks.user - startTicks.user
    const system = endTicks.system - startTicks.system
    return {
      counts: done.counts,
      cpuSeconds: (user + system) / clockTicks,
      systemSeconds: system / clockTicks,
      wallSeconds: (performance.now() - startTime) / 1000,
    }
  }

  return {
    run,
    stop: async () => {
      stdin.end()
      const killer = setTimeout(() => worker.kill("SIGKILL"), 5_000)
      await exited(worker)
      clearTimeout(killer)
    },
  }
}
