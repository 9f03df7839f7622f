/**
 * Overload: each server held to a share of one core by a cgroup CPU quota (as a container's CPU
 * limit holds it; `BENCH_OVERLOAD_CORES`, 0.3) and pinned to core 0, an open-loop generator
 * (open-loop-worker.ts) pinned to core 1, every request given up 1 s after its scheduled time.
 * First each baseline's capacity (`capacityOf`: the highest open-loop rate it serves whole with
 * admission control off), and every server warmed at 0.7× its capacity; then open-loop runs at
 * multiples of it (0.8×, 1.5×, 2×, 3×): the service with admission control as it is by default,
 * the same with it off, the same behind the shipped nginx configuration as the README runs it
 * (nginx pinned to the generator's core, `max_conns` a quarter second of the capacity), and Koa as
 * operated, on `GET /v1/pets?limit=20` in memory; all but Koa on durable creates on an SQLite
 * file. A refusal's cost is the service's CPU over its refusals where it refused nearly
 * everything (overload-report.ts), beside the floor of any answer in Node: a bare `node:http`
 * server answering the same pre-built 503 to every request, at the highest level (server CPU,
 * and the kernel's share of it, from /proc throughout). Before each run, the servers' core does a
 * fixed piece of work (core-speed.ts): on a virtual machine its speed moves from minute to minute.
 *
 *   npm run overload -w @petstore/bench          # about 30 minutes
 *   BENCH_QUICK=1 npm run overload -w @petstore/bench
 *
 * It needs root (the cgroup), taskset, nginx (Debian's nginx-light) and two cores; it waits for
 * the machine's 1-minute load average to fall below 1 before it starts
 * (`BENCH_LOAD_WAIT_MINUTES`, 20). A full run writes results/overload.json and the
 * `overload:results` block of RESULTS.md; a quick one prints.
 *
 * Settings: BENCH_OVERLOAD_CORES (0.3), BENCH_OVERLOAD_SECONDS (5 measured, 4 quick),
 * BENCH_OVERLOAD_WARMUP (2), BENCH_OVERLOAD_ROUNDS (1), BENCH_OVERLOAD_LEVELS (0.8,1.5,2,3),
 * BENCH_OVERLOAD_ONLY (memory or sqlite), BENCH_OVERLOAD_TARGETS (names, comma-separated),
 * BENCH_OVERLOAD_CAPACITY (req/s, instead of measuring it), BENCH_OVERLOAD_DIP (cores:seconds, a
 * moment of a slower core in each run; quick runs only), BENCH_OVERLOAD_EXTRA (more services
 * beside the others, as `name:VAR=value,…;name:…`; `NODE_FLAGS` holds Node's own flags),
 * BENCH_LOAD_WAIT_MINUTES (20; 0 does not wait).
 */
import { execFile, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { seedPet } from "./baselines/pet-store.js"
import { environment, repoRoot, serviceBuild } from "./http-bench-environment.js"
import type { LoadRequest } from "./load-plan.js"
import {
  latencies,
  OpenLoopEvent,
  type OpenLoopCounts,
  type OpenLoopPlan,
} from "./open-loop-plan.js"
import { startHealthProbe, type HealthProbe, type ProbeResult } from "./health-probe.js"
import { killChildren, startServer, type Server, type ServerCommand } from "./processes.js"
import { cpuQuota, cpuQuotaUnavailable, type CpuQuota } from "@petstore/test-support/cpu-quota"
import {
  behindNginxSettings,
  maxConnsFor,
  shippedNginx,
  startNginx,
  type RunningNginx,
} from "@petstore/test-support/nginx"
import { clockTicks, cpuTicks } from "@petstore/test-support/process-cpu"
import { freePort } from "@petstore/test-support/redis-server"
import { numberSetting, quick } from "./bench-settings.js"
import {
  floorLevel,
  floorTarget,
  overloadMarkdown,
  type OverloadReport,
  type Window,
  type OverloadRun,
} from "./overload-report.js"
import { formatted, writeOwnBlock } from "./results-markdown.js"
import { coreWorkMs } from "./core-speed.js"

/** `cores:seconds`, or none when empty. */
const dipSetting = (
  value: string,
): { readonly cores: number; readonly seconds: number } | undefined => {
  if (value === "") return undefined
  const [cores, seconds] = value.split(":").map(Number)
  if (cores === undefined || seconds === undefined || !(cores > 0) || !(seconds > 0))
    throw new Error(`BENCH_OVERLOAD_DIP is "${value}": give cores:seconds, as 0.22:1.5`)
  // A full run writes RESULTS: its figures must be of the quota as set.
  if (!quick) throw new Error("BENCH_OVERLOAD_DIP is for exploring: set BENCH_QUICK=1 with it")
  return { cores, seconds }
}

const settings = {
  cores: numberSetting("BENCH_OVERLOAD_CORES", 0.3),
  seconds: numberSetting("BENCH_OVERLOAD_SECONDS", quick ? 4 : 5),
  warmup: numberSetting("BENCH_OVERLOAD_WARMUP", 2),
  rounds: numberSetting("BENCH_OVERLOAD_ROUNDS", 1),
  levels: (process.env["BENCH_OVERLOAD_LEVELS"] || "0.8,1.5,2,3").split(",").map(Number),
  only: process.env["BENCH_OVERLOAD_ONLY"] ?? "",
  loadWaitMinutes: numberSetting("BENCH_LOAD_WAIT_MINUTES", 20),
  /** `BENCH_OVERLOAD_CAPACITY`: a capacity (req/s) to use for every server instead of measuring it, when exploring. */
  capacity: numberSetting("BENCH_OVERLOAD_CAPACITY", 0),
  deadlineMs: 1000,
  seedPets: 1000,
  /**
   * The generator's connections, as a load balancer's pool to one instance: opened before each
   * run and kept; a request finding them all busy waits for one, its deadline running. Enough
   * that at 3× capacity the requests in flight (rate × latency) seldom find them all busy: with
   * 1,000, refusals' p99 at 3× came out 672–984 ms against 261–560 (RESULTS.md, Overload).
   */
  connections: numberSetting("BENCH_OVERLOAD_CONNECTIONS", 3000),
  /**
   * `BENCH_OVERLOAD_DIP` (`cores:seconds`, e.g. `0.22:1.5`): in the middle of each measured run,
   * the server's quota is lowered to that share of a core for that long, as a host's other guests
   * slow a virtual machine's core for a moment (ending with the run at the latest); none unless
   * given. Quick runs only: a full run would write its figures as the usual ones.
   */
  dip: dipSetting(process.env["BENCH_OVERLOAD_DIP"] ?? ""),
  /** `BENCH_OVERLOAD_TARGETS`: the targets to run (names, comma-separated); all unless given. */
  targets: (process.env["BENCH_OVERLOAD_TARGETS"] ?? "").split(",").filter((name) => name !== ""),
  extra: (process.env["BENCH_OVERLOAD_EXTRA"] ?? "")
    .split(";")
    .filter((entry) => entry.includes(":"))
    .map((entry) => {
      const [name = "", variables = ""] = entry.split(":")
      return {
        name,
        env: Object.fromEntries(
          // A value may hold "=" itself (NODE_OPTIONS=--max-semi-space-size=64).
          variables.split(",").map((pair) => {
            const equals = pair.indexOf("=")
            return [pair.slice(0, equals), pair.slice(equals + 1)]
          }),
        ),
      }
    }),
}
const serverCore = 0
const loadCore = 1
const benchDir = fileURLToPath(new URL(".", import.meta.url))
const apiKey = "bench-key-0123456789"
const authorization = { Authorization: `Bearer ${apiKey}` }

const started = Date.now()
const log = (message: string) => {
  const seconds = Math.round((Date.now() - started) / 1000)
  process.stderr.write(
    `[${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}] ${message}\n`,
  )
}

/** Waits until the 1-minute load average is below 1, polling every 30 s, for at most the setting. */
const waitForQuietMachine = async (): Promise<{
  waitedSeconds: number
  load: number
  quiet: boolean
}> => {
  const from = Date.now()
  const limit = settings.loadWaitMinutes * 60_000
  for (;;) {
    const [load = 0] = loadavg()
    if (load < 1 || settings.loadWaitMinutes === 0)
      return { waitedSeconds: (Date.now() - from) / 1000, load, quiet: load < 1 }
    if (Date.now() - from >= limit) {
      log(
        `load average still ${load.toFixed(2)} after ${settings.loadWaitMinutes} min: measuring anyway`,
      )
      return { waitedSeconds: (Date.now() - from) / 1000, load, quiet: false }
    }
    log(`load average ${load.toFixed(2)}: waiting for it to fall below 1`)
    await new Promise((resolve) => setTimeout(resolve, 30_000))
  }
}

interface Scenario {
  readonly id: "list20" | "create"
  readonly title: string
  readonly request: LoadRequest
  readonly storage: "memory" | "sqlite"
  /** The rate capacity is first measured at with 0.3 of a core, req/s: well below it on this machine. */
  readonly firstGuess: number
}

const list20: Scenario = {
  id: "list20",
  title: "GET /v1/pets?limit=20, memory",
  request: { method: "GET", path: "/v1/pets?limit=20", headers: authorization },
  storage: "memory",
  firstGuess: 800,
}
const durableCreate: Scenario = {
  id: "create",
  title: "POST /v1/pets, SQLite file",
  request: {
    method: "POST",
    path: "/v1/pets",
    headers: { ...authorization, "Content-Type": "application/json" },
    body: JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
  },
  storage: "sqlite",
  firstGuess: 300,
}

const build = serviceBuild()

/** The service as benchmarked elsewhere (no access log, no rate limit), the generator's many connections allowed. */
const service = (
  name: string,
  storage: string,
  { NODE_FLAGS: nodeFlags = "", ...env }: Record<string, string> = {},
): ServerCommand => ({
  name,
  // Node's own flags, such as V8's that NODE_OPTIONS refuses (`--single-threaded-gc`).
  args: [...nodeFlags.split(" ").filter((flag) => flag !== ""), ...build.args],
  cwd: repoRoot,
  env: {
    PETSTORE_STORAGE: storage,
    PETSTORE_API_KEYS: apiKey,
    PETSTORE_LOG_LEVEL: "warn",
    PETSTORE_RATE_LIMIT: "off",
    PETSTORE_AUTH_FAILURE_LIMIT: "off",
    // The generator stands for many clients, all from 127.0.0.1.
    PETSTORE_MAX_CONNECTIONS_PER_ADDRESS: "off",
    PORT: "0",
    HOST: "127.0.0.1",
    // Probes asked apart too, from the probe port's own thread.
    PETSTORE_PROBE_PORT: "0",
    ...env,
  },
})

const koaOperated: ServerCommand = {
  name: "koa, operated",
  args: ["--import", "tsx", path.join(benchDir, "baselines", "koa-operated.ts")],
  cwd: benchDir,
  env: { PETSTORE_API_KEYS: apiKey, PETSTORE_LOG_LEVEL: "warn", PORT: "0", HOST: "127.0.0.1" },
}

/** The floor of a refusal: node:http answering the service's pre-built 503 to every request. */
const nodeHttpRefusing: ServerCommand = {
  name: floorTarget,
  args: ["--import", "tsx", path.join(benchDir, "baselines", "node-http-refusing.ts")],
  cwd: benchDir,
  env: { PORT: "0", HOST: "127.0.0.1" },
}

const admissionOff = { PETSTORE_OVERLOAD_TARGET: "off" }

interface Target {
  readonly command: ServerCommand
  /** Whose capacity the levels multiply. */
  readonly capacityOf: string
  /** Measured at one level only, to cost a refusal. */
  readonly refusalProbe?: boolean
  /**
   * Loaded through the shipped nginx configuration, pinned to the generator's core, its
   * `max_conns` a quarter second of the capacity; probed directly, as orchestrators probe.
   */
  readonly behindNginx?: boolean
}

/** POSTs pets 1..count one after another; a refusal (a server just started, still busy) is retried. */
const seed = async (server: Server) => {
  for (let i = 1, refusals = 0; i <= settings.seedPets; i++) {
    const response = await fetch(`${server.origin}/v1/pets`, {
      method: "POST",
      headers: { ...authorization, "Content-Type": "application/json" },
      body: JSON.stringify(seedPet(i)),
    })
    await response.text()
    if (response.status === 503 && ++refusals <= 20) {
      i--
      await new Promise((resolve) => setTimeout(resolve, 50))
    } else if (response.status !== 201) {
      throw new Error(`${server.name}: seeding answered ${response.status}`)
    }
  }
}

/** The open-loop worker: one process pinned to the load core, one plan at a time. */
const startOpenLoopWorker = () => {
  const worker = spawn(
    "taskset",
    [
      "-c",
      String(loadCore),
      process.execPath,
      "--import",
      "tsx",
      path.join(benchDir, "open-loop-worker.ts"),
    ],
    { cwd: benchDir, stdio: ["pipe", "pipe", "inherit"] },
  )
  process.on("exit", () => worker.kill("SIGKILL"))
  const decode = Schema.decodeUnknownOption(Schema.parseJson(OpenLoopEvent))
  let listener: ((event: OpenLoopEvent) => void) | undefined
  if (worker.stdout === null || worker.stdin === null) throw new Error("worker without pipes")
  const stdin = worker.stdin
  createInterface({ input: worker.stdout }).on("line", (line) => {
    const event = decode(line)
    if (event._tag === "Some") listener?.(event.value)
  })
  return {
    /** Runs a plan; `onMeasuring` and `onMeasured` are called as the measured window opens and closes. */
    run: (plan: OpenLoopPlan, onMeasuring: () => void, onMeasured: () => void) =>
      new Promise<OpenLoopCounts>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error("the open-loop worker did not finish in time")),
          (plan.warmupSeconds + plan.seconds + 60) * 1000,
        )
        listener = (event) => {
          if (event.event === "measuring") onMeasuring()
          else if (event.event === "measured") onMeasured()
          else {
            clearTimeout(timer)
            listener = undefined
            resolve(event.counts)
          }
        }
        stdin.write(`${JSON.stringify({ plan })}\n`)
      }),
    stop: () => {
      stdin.end()
    },
  }
}
type OpenLoopWorker = ReturnType<typeof startOpenLoopWorker>

const openLoopRun = async (
  worker: OpenLoopWorker,
  server: Server,
  quota: CpuQuota,
  scenario: Scenario,
  rate: number,
  window: { readonly warmup: number; readonly seconds: number } = settings,
  {
    dip,
    through = server.origin,
  }: {
    /** A moment of a slower core in the run (`BENCH_OVERLOAD_DIP`). */
    readonly dip?: { readonly cores: number; readonly seconds: number } | undefined
    /** Where the load goes, if not to the server: the balancer in front of it. */
    readonly through?: string | undefined
  } = {},
): Promise<
  Omit<OverloadRun, "target" | "scenario" | "level" | "round" | "capacity" | "coreWorkMs">
> => {
  let startTicks = { user: 0, system: 0 }
  let startedAt = 0
  let cpuSeconds = 0
  let systemSeconds = 0
  let wallSeconds = 0
  let dipTimers: ReadonlyArray<NodeJS.Timeout> = []
  let throttleStart = quota.throttling()
  let throttled = 0
  let periods = 0
  // The kernel's accept queue: connections made but not yet accepted, which the server cannot see.
  const port = new URL(server.origin).port
  let acceptQueueMax = 0
  let probes: { api: HealthProbe; port: HealthProbe | undefined } | undefined
  let probed: { api: ProbeResult; port: ProbeResult | undefined } | undefined
  const sampler = setInterval(() => {
    execFile("ss", ["-ltnH", `sport = :${port}`], (error, stdout) => {
      if (error !== null) return
      const queued = Number(stdout.trim().split(/\s+/)[1] ?? 0)
      if (queued > acceptQueueMax) acceptQueueMax = queued
    })
  }, 100)
  const counts = await worker.run(
    {
      origin: through,
      requests: [scenario.request],
      rate,
      warmupSeconds: window.warmup,
      seconds: window.seconds,
      deadlineMs: settings.deadlineMs,
      maxSockets: settings.connections,
      preopen: settings.connections,
      openPath: "/healthz",
    },
    () => {
      const probe = (origin: string) => startHealthProbe(origin, "/healthz", 100)
      probes = {
        api: probe(server.origin),
        port: server.probeOrigin === undefined ? undefined : probe(server.probeOrigin),
      }
      startTicks = cpuTicks(server.pid)
      startedAt = performance.now()
      throttleStart = quota.throttling()
      if (dip !== undefined) {
        const startMs = Math.max(0, ((window.seconds - dip.seconds) / 2) * 1000)
        dipTimers = [
          setTimeout(() => quota.hold(dip.cores), startMs),
          setTimeout(() => quota.hold(settings.cores), startMs + dip.seconds * 1000),
        ]
      }
    },
    () => {
      if (dipTimers.length > 0) {
        dipTimers.forEach(clearTimeout)
        quota.hold(settings.cores)
      }
      const end = cpuTicks(server.pid)
      cpuSeconds = (end.user - startTicks.user + end.system - startTicks.system) / clockTicks
      systemSeconds = (end.system - startTicks.system) / clockTicks
      wallSeconds = (performance.now() - startedAt) / 1000
      const throttle = quota.throttling()
      throttled = throttle.throttled - throttleStart.throttled
      periods = throttle.periods - throttleStart.periods
      probed = probes && { api: probes.api.stop(), port: probes.port?.stop() }
    },
  )
  clearInterval(sampler)
  // Let what is still queued drain before the next run.
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  return {
    rate,
    counts,
    probes: probed?.api ?? { answered: latencies([]), failures: 0, waitingAtEndMs: 0 },
    ...(probed?.port === undefined ? {} : { probePortProbes: probed.port }),
    cpuSeconds,
    systemSeconds,
    wallSeconds,
    throttledShare: periods === 0 ? 0 : throttled / periods,
    acceptQueueMax,
    loadAverage: loadavg()[0] ?? 0,
  }
}

/** `firstGuess` at the quota's share of a core. */
const firstGuess = (scenario: Scenario) => Math.round((scenario.firstGuess * settings.cores) / 0.3)

/** How capacity is searched and servers warmed; the report's method text reads it. */
const search: OverloadReport["search"] = {
  /**
   * A shorter window for the runs that look for capacity, warmed as long as the measured ones: a
   * rate near capacity settles within seconds (a busier loop reads more requests a turn, each
   * costing less), and a shorter warm-up judged the settling.
   */
  window: { warmup: settings.warmup, seconds: 3 },
  /**
   * The window that confirms a capacity: long enough to take in the garbage collector's major
   * cycles, which come every 10 to 25 s under load here and take part of the quota for a second
   * or two. A rate served whole for 5 s was served with p99 up to 980 ms at 0.8× of it in half
   * the rounds of stop 43 (admission control off): what a process sustains includes its
   * collections.
   */
  sustainWindow: { warmup: settings.warmup, seconds: 30 },
  /**
   * At most how many times the capacity found is lowered by a tenth, each rate tried, until a
   * long run confirms it.
   */
  confirmSteps: 4,
  /** Every server's warm-up once capacities are known, at this fraction of its capacity. */
  warmLevel: 0.7,
  /** The warm-up before a search and before each server's runs. */
  warmWindow: { warmup: 4, seconds: 4 },
}
const { window: searchWindow, sustainWindow, confirmSteps, warmLevel, warmWindow } = search

/**
 * Whether a server served a run whole: every request answered 2xx, the slowest well within the
 * deadline (a quarter of it: a p99 near half of it was seen at a rate the same server could not
 * serve a minute later).
 */
const servedWhole = (counts: OpenLoopCounts) =>
  counts.served.count === counts.scheduled && counts.served.p99 <= settings.deadlineMs / 4

/**
 * What a server sustains under its quota, with admission control off: the highest open-loop rate
 * it serves whole (`servedWhole`). Found from the quota over the CPU a request costs at
 * `firstGuess` (an underestimate: a request costs less CPU the busier the server, its reads and
 * writes batched), going up by a quarter while served whole, then halving the last step twice
 * (a rate answered whole but late is run twice, the second deciding), then confirmed by a run of
 * `sustainWindow` (once: so long a window takes in its slow moments), lowered by a tenth and tried
 * again at most `confirmSteps` times until served whole (if never, the last rate tried is taken,
 * marked unconfirmed).
 * (A closed loop under-measures it here: its client, busy on the other core, slows the server's
 * hyperthreaded one, and its connections' standing queue costs more per request.)
 */
const capacityOf = async (
  worker: OpenLoopWorker,
  server: Server,
  quota: CpuQuota,
  scenario: Scenario,
) => {
  const once = async (rate: number, window: Window) => {
    const run = await openLoopRun(worker, server, quota, scenario, rate, window)
    const whole = servedWhole(run.counts)
    const cpuMicrosPerRequest = (run.cpuSeconds * 1e6) / Math.max(1, run.counts.served.count)
    log(
      `  ${server.name}: ${Math.round(rate)} req/s ${whole ? "served whole" : "not served whole"} (served ${run.counts.served.count} of ${run.counts.scheduled}, p99 ${run.counts.served.p99.toFixed(0)} ms, ${cpuMicrosPerRequest.toFixed(1)} µs CPU each)`,
    )
    return {
      whole,
      answeredAll: run.counts.served.count === run.counts.scheduled,
      cpuMicrosPerRequest,
    }
  }
  // A run that answered everything, only some of it late, is run again and the second decides:
  // one slow moment (a checkpoint on the SQLite file, the host's other guests) ended the search
  // at a third of what the server then served whole at "3×". A run that left requests unanswered
  // decides at once: a server collapsed with admission control off stays collapsed a while, and
  // a second look at a lower rate would misjudge it.
  const attempt = async (rate: number, window = searchWindow) => {
    const first = await once(rate, window)
    return first.whole || !first.answeredAll ? first : once(rate, window)
  }
  const guess = firstGuess(scenario)
  // Warmed first: a process still compiling its hot paths answers its first seconds slowly.
  await openLoopRun(worker, server, quota, scenario, guess, warmWindow)
  const first = await attempt(guess)
  if (!first.whole) throw new Error(`${server.name}: not served whole at ${guess} req/s`)
  let low = guess
  let lowCost = first.cpuMicrosPerRequest
  let high = 0
  let next = Math.max(low * 1.25, (settings.cores * 1e6) / first.cpuMicrosPerRequest)
  for (let steps = 0; high === 0 && steps < 10; steps++) {
    const tried = await attempt(next)
    if (tried.whole) {
      low = next
      lowCost = tried.cpuMicrosPerRequest
      next = low * 1.25
    } else high = next
  }
  if (high === 0) throw new Error(`${server.name}: no rate it could not serve whole`)
  for (let steps = 0; steps < 2; steps++) {
    const middle: number = (low + high) / 2
    const tried = await attempt(middle)
    if (tried.whole) {
      low = middle
      lowCost = tried.cpuMicrosPerRequest
    } else high = middle
  }
  // Confirmed over a long window: a rate served whole for 3 s may not be for longer (a major
  // collection, or on the SQLite file a checkpoint, may fall in it), and a capacity set too high
  // would make 0.8× an overload.
  let confirmed = false
  for (let steps = 0; !confirmed && steps <= confirmSteps; steps++) {
    if (steps > 0) low *= 0.9
    const tried = await once(low, sustainWindow)
    lowCost = tried.cpuMicrosPerRequest
    confirmed = tried.whole
  }
  log(`  ${server.name}: capacity ${Math.round(low)} req/s${confirmed ? "" : ", unconfirmed"}`)
  return {
    perSecond: low,
    cpuMicrosPerRequest: lowCost,
    rate: low,
    confirmation: confirmed ? ("confirmed" as const) : ("unconfirmed" as const),
  }
}

const main = async () => {
  const unavailable = cpuQuotaUnavailable()
  if (unavailable !== undefined) throw new Error(`overload.ts cannot run here: ${unavailable}`)
  for (const warning of build.warnings) log(`warning: ${warning}`)
  const quiet = await waitForQuietMachine()
  log(
    `load average ${quiet.load.toFixed(2)}${quiet.waitedSeconds > 0 ? ` after waiting ${Math.round(quiet.waitedSeconds)} s` : ""}`,
  )
  const directory = mkdtempSync(path.join(tmpdir(), "petstore-overload-"))
  const worker = startOpenLoopWorker()
  const runs: Array<OverloadRun> = []
  const capacities: Array<OverloadReport["capacities"][number]> = []
  /**
   * `BENCH_OVERLOAD_EXTRA`: more services, as `name:VAR=value,VAR=value;name:…`, beside the others;
   * `NODE_FLAGS` holds Node's own flags, space-separated.
   */
  const extra = (storage: (name: string) => string): ReadonlyArray<Target> =>
    settings.extra.map(({ name, env }) => ({
      command: service(name, storage(name), env),
      capacityOf: "service, admission off",
    }))
  const kept = (targets: ReadonlyArray<Target>) =>
    settings.targets.length === 0
      ? targets
      : targets.filter(
          (target) =>
            settings.targets.includes(target.command.name) ||
            target.command.name === "service, admission off",
        )
  const groups: ReadonlyArray<{ scenario: Scenario; targets: ReadonlyArray<Target> }> = [
    {
      scenario: list20,
      targets: [
        {
          command: service("service", "memory"),
          capacityOf: "service, admission off",
        },
        {
          command: service("service, admission off", "memory", admissionOff),
          capacityOf: "service, admission off",
        },
        {
          command: service("service behind nginx", "memory", behindNginxSettings),
          capacityOf: "service, admission off",
          behindNginx: true,
        },
        { command: koaOperated, capacityOf: "koa, operated" },
        { command: nodeHttpRefusing, capacityOf: "service, admission off", refusalProbe: true },
        ...extra(() => "memory"),
      ],
    },
    {
      scenario: durableCreate,
      targets: [
        {
          command: service("service", `file:${path.join(directory, "on.db")}`),
          capacityOf: "service, admission off",
        },
        {
          command: service(
            "service, admission off",
            `file:${path.join(directory, "off.db")}`,
            admissionOff,
          ),
          capacityOf: "service, admission off",
        },
        {
          command: service(
            "service behind nginx",
            `file:${path.join(directory, "nginx.db")}`,
            behindNginxSettings,
          ),
          capacityOf: "service, admission off",
          behindNginx: true,
        },
        ...extra((name) => `file:${path.join(directory, `${name.replace(/\W+/g, "-")}.db`)}`),
      ],
    },
  ]
  try {
    for (const { scenario, targets: all } of groups) {
      const targets = kept(all)
      if (settings.only !== "" && settings.only !== scenario.storage) continue
      log(`${scenario.title}`)
      const servers: Array<{ target: Target; server: Server; quota: CpuQuota }> = []
      const nginxes: Array<RunningNginx> = []
      /** Where each server's load goes: nginx's origin for those behind it, once started. */
      const through = new Map<Server, string>()
      try {
        for (const target of targets) {
          const server = await startServer(target.command, serverCore)
          // Refusing every request that waited at all, it would refuse some of the seeding too.
          if (target.refusalProbe !== true) await seed(server)
          const quota = cpuQuota("petstore-bench-overload", settings.cores)
          if (typeof quota === "string")
            throw new Error(`cannot hold a server to a CPU quota: ${quota}`)
          quota.add(server.pid)
          servers.push({ target, server, quota })
        }
        const capacity = new Map<string, number>()
        for (const { server, quota } of servers) {
          // Warm, as a running server is: a cold one serves a fraction of what it will.
          await openLoopRun(worker, server, quota, scenario, firstGuess(scenario) / 2, searchWindow)
        }
        for (const { target, server, quota } of servers) {
          if (target.capacityOf !== server.name) continue
          const workMs = await coreWorkMs(serverCore)
          log(`  core ${serverCore}: the fixed work took ${workMs.toFixed(1)} ms`)
          const measured =
            settings.capacity > 0
              ? {
                  perSecond: settings.capacity,
                  cpuMicrosPerRequest: 0,
                  rate: 0,
                  confirmation: "given" as const,
                }
              : await capacityOf(worker, server, quota, scenario)
          capacities.push({
            target: server.name,
            scenario: scenario.id,
            ...measured,
            coreWorkMs: workMs,
          })
          capacity.set(server.name, measured.perSecond)
        }
        for (const { target, server } of servers) {
          const base = capacity.get(target.capacityOf)
          if (base === undefined || target.behindNginx !== true) continue
          const maxConns = maxConnsFor(base)
          const port = await freePort()
          const nginx = await startNginx(
            shippedNginx([Number(new URL(server.origin).port)], port, maxConns),
            port,
            { workers: 1, core: loadCore, connections: settings.connections * 2, accessLog: false },
          )
          nginxes.push(nginx)
          through.set(server, nginx.origin)
          log(`  ${server.name}: nginx on ${nginx.origin}, max_conns ${maxConns}`)
        }
        for (const { target, server, quota } of servers) {
          const base = capacity.get(target.capacityOf)
          if (base === undefined || target.refusalProbe === true) continue
          // Each as warm as the one whose capacity was searched: a process still compiling its
          // hot paths, on the same quota, serves less, and would rightly refuse below capacity.
          await openLoopRun(worker, server, quota, scenario, base * warmLevel, warmWindow, {
            through: through.get(server),
          })
        }
        for (let round = 1; round <= settings.rounds; round++) {
          log(`round ${round} of ${settings.rounds}`)
          for (const level of settings.levels) {
            for (const { target, server, quota } of servers) {
              if (target.refusalProbe === true && level !== floorLevel(settings.levels)) continue
              const base = capacity.get(target.capacityOf)
              if (base === undefined) throw new Error(`no capacity for ${target.capacityOf}`)
              const workMs = await coreWorkMs(serverCore)
              const run = await openLoopRun(
                worker,
                server,
                quota,
                scenario,
                base * level,
                settings,
                { dip: settings.dip, through: through.get(server) },
              )
              const { counts } = run
              log(
                `  ${server.name.padEnd(22)} ${level}× ${Math.round(run.rate)} req/s: goodput ${(counts.served.count / settings.seconds / base).toFixed(2)}, served p99 ${counts.served.p99.toFixed(0)} ms, refused ${counts.refused.count} (p99 ${counts.refused.p99.toFixed(0)} ms; by second ${counts.refusedEachSecond.join(" ")}), timed out ${counts.timedOut}, failed ${counts.failed}, /healthz p50 ${run.probes.answered.p50.toFixed(0)} max ${run.probes.answered.max.toFixed(0)} ms (${run.probes.failures} failed, ${run.probes.waitingAtEndMs.toFixed(0)} ms waiting at the end)${run.probePortProbes === undefined ? "" : `, on the probe port max ${run.probePortProbes.answered.max.toFixed(0)} ms (${run.probePortProbes.failures} failed)`}, CPU ${((run.cpuSeconds / run.wallSeconds / settings.cores) * 100).toFixed(0)}% of quota (${((run.systemSeconds / run.cpuSeconds) * 100).toFixed(0)}% kernel; ${((run.cpuSeconds * 1e6) / Math.max(1, counts.served.count + counts.refused.count)).toFixed(1)} µs an answer), generator ${(counts.workerCpuShare * 100).toFixed(0)}% (lag p99 ${counts.sendLagP99.toFixed(1)} ms), ${counts.connectionsOpened} connections, accept queue ≤ ${run.acceptQueueMax}, core ${serverCore}'s fixed work ${workMs.toFixed(1)} ms`,
              )
              runs.push({
                ...run,
                target: server.name,
                scenario: scenario.id,
                level,
                round,
                capacity: base,
                coreWorkMs: workMs,
              })
            }
          }
        }
      } finally {
        for (const nginx of nginxes) await nginx.stop()
        for (const { server, quota } of servers) {
          await server.stop()
          quota.remove()
        }
      }
    }
  } finally {
    worker.stop()
    rmSync(directory, { recursive: true, force: true })
  }
  const report: OverloadReport = {
    date: new Date().toISOString(),
    minutes: (Date.now() - started) / 60_000,
    machine: environment(),
    service: build.description,
    settings,
    search,
    loadAverageAtStart: quiet.load,
    waitedForQuietSeconds: quiet.waitedSeconds,
    capacities,
    runs,
  }
  const markdown = overloadMarkdown(report)
  if (quick) {
    process.stdout.write(`${markdown}\n`)
    return
  }
  mkdirSync(path.join(benchDir, "results"), { recursive: true })
  const reportFile = path.join(benchDir, "results", "overload.json")
  writeFileSync(reportFile, await formatted(reportFile, JSON.stringify(report)))
  await writeOwnBlock("overload:results", markdown)
  log("wrote results/overload.json and the overload:results block of RESULTS.md")
}

main().catch((error: unknown) => {
  killChildren()
  process.stderr.write(
    `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  )
  process.exit(1)
})
