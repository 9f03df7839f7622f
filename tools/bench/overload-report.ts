/** What overload.ts measured, and the `overload:results` block of RESULTS.md written from it. */
import type { Machine } from "./http-bench-environment.js"
import type { ProbeResult } from "./health-probe.js"
import type { OpenLoopCounts } from "./open-loop-plan.js"
import { format, median, table } from "./statistics.js"

export interface OverloadRun {
  readonly target: string
  readonly scenario: "list20" | "create"
  /** The offered load as a multiple of `capacity`. */
  readonly level: number
  readonly round: number
  /** The capacity the level multiplies, req/s. */
  readonly capacity: number
  /** Requests scheduled a second. */
  readonly rate: number
  readonly counts: OpenLoopCounts
  /** `/healthz` asked every 100 ms over the measured window, from the bench's process. */
  readonly probes: ProbeResult
  /** The same on the service's probe port (`PETSTORE_PROBE_PORT`), answered by a thread of its own. */
  readonly probePortProbes?: ProbeResult
  /** Server CPU (user + system, /proc) over the measured window. */
  readonly cpuSeconds: number
  /** Of which in the kernel (system time). */
  readonly systemSeconds: number
  readonly wallSeconds: number
  /** The share of the quota's periods in which the server was throttled. */
  readonly throttledShare: number
  /** The most connections seen waiting in the listening socket's accept queue (`ss`, every 100 ms). */
  readonly acceptQueueMax: number
  readonly loadAverage: number
  /** How long the fixed work of core-speed.ts took on the servers' core just before the run. */
  readonly coreWorkMs: number
}

/** A run's unmeasured warm-up and measured seconds. */
export interface Window {
  readonly warmup: number
  readonly seconds: number
}

export interface OverloadReport {
  readonly date: string
  readonly minutes: number
  readonly machine: Machine
  readonly service: string
  readonly settings: {
    readonly cores: number
    readonly seconds: number
    readonly warmup: number
    readonly rounds: number
    readonly levels: ReadonlyArray<number>
    readonly deadlineMs: number
    readonly connections: number
  }
  /** How capacity was searched and servers warmed (`overload.ts`), each window in seconds. */
  readonly search: {
    readonly window: Window
    readonly sustainWindow: Window
    readonly confirmSteps: number
    readonly warmLevel: number
    readonly warmWindow: Window
  }
  readonly loadAverageAtStart: number
  readonly waitedForQuietSeconds: number
  readonly capacities: ReadonlyArray<{
    readonly target: string
    readonly scenario: "list20" | "create"
    /** The highest open-loop rate served whole, req/s. */
    readonly perSecond: number
    readonly cpuMicrosPerRequest: number
    /** The rate `cpuMicrosPerRequest` was measured at, req/s. */
    readonly rate: number
    /** How long the fixed work of core-speed.ts took on the servers' core just before the search. */
    readonly coreWorkMs: number
    /**
     * Whether a run of `search.sustainWindow` served it whole ("unconfirmed": none of the rates
     * tried was), or it was given (`BENCH_OVERLOAD_CAPACITY`).
     */
    readonly confirmation: "confirmed" | "unconfirmed" | "given"
  }>
  readonly runs: ReadonlyArray<OverloadRun>
}

const scenarioTitles = {
  list20: "`GET /v1/pets?limit=20` on the memory store",
  create: "`POST /v1/pets` on the SQLite file (durable creates)",
} as const

const confirmationShown = {
  confirmed: "yes",
  unconfirmed: "no (the last rate tried)",
  given: "— (given)",
} as const

/** The median over rounds of a figure, with its range when the rounds differ. */
const spreadOf = (values: ReadonlyArray<number>, digits: number, unit = "") => {
  const low = Math.min(...values)
  const high = Math.max(...values)
  const shown = `${format(median(values), digits)}${unit}`
  return values.length < 2 || format(low, digits) === format(high, digits)
    ? shown
    : `${shown} (${format(low, digits)}–${format(high, digits)})`
}

/** The longest a probe waited, answered or still waiting when the window closed. */
const longestProbeMs = (result: ProbeResult) => Math.max(result.answered.max, result.waitingAtEndMs)

/**
 * A probe column's cell: the longest wait's spread over the rounds, "≥" where a probe was still
 * unanswered at the end; "—" when the target has no such route (every probe answered otherwise)
 * or was not asked.
 */
const probeCell = (results: ReadonlyArray<ProbeResult>): string => {
  const noRoute = results.every((result) => result.answered.count === 0 && result.failures > 0)
  if (results.length === 0 || noRoute) return "—"
  const cell = spreadOf(results.map(longestProbeMs), 0, " ms")
  return results.some((result) => result.waitingAtEndMs > result.answered.max) ? `≥ ${cell}` : cell
}

/** A tenth of the deadline: a generator sending this late is measuring itself. */
const generatorBehindMs = 100
const generatorBehind = (run: OverloadRun) => run.counts.sendLagP99 > generatorBehindMs

/** The bare `node:http` server that answers the service's refusal to every request. */
export const floorTarget = "node:http refusing all"

/**
 * The one level the floor runs at: the highest, at which the service refuses nearly everything,
 * so that the two are read at the same rate. The floor, cheaper, may still idle there: then each
 * of its answers also pays for waking the loop, and the floor reads a little high.
 */
export const floorLevel = (levels: ReadonlyArray<number>): number => Math.max(...levels)

/** The service's capacity in a scenario, measured with admission control off. */
const serviceCapacity = (report: OverloadReport, scenario: OverloadRun["scenario"]) =>
  report.capacities.find(
    (found) => found.scenario === scenario && found.target === "service, admission off",
  )

/** A run in which the service refused nearly everything it answered. */
const refusedNearlyAll = (run: OverloadRun) =>
  run.counts.refused.count >= 0.9 * (run.counts.refused.count + run.counts.served.count)

/**
 * CPU µs a run spent on each refusal: its CPU less what it served, each served request at
 * `servedMicros`, over its refusals.
 */
const microsPerRefusal = (run: OverloadRun, servedMicros = 0) =>
  (run.cpuSeconds * 1e6 - run.counts.served.count * servedMicros) / run.counts.refused.count

/**
 * What a refusal costs in a scenario (µs of CPU), measured, not fitted: the service's CPU in the
 * runs in which it refused nearly everything (at 3×, the generator keeping up), less what it
 * served there at capacity's cost, over its refusals; else the floor's (a bare `node:http`
 * server answering the same pre-built 503 to a GET). Per scenario: a refused create's body is
 * still read and dropped. (A fit of CPU = a × served + b × refused over the overloaded runs gave
 * refusals 28 µs, below the floor, because a served request costs less the busier the loop,
 * which such a fit cannot see.)
 */
export const refusalCost = (
  report: OverloadReport,
  scenario: OverloadRun["scenario"],
):
  | { readonly micros: number; readonly from: "service" | "floor"; readonly runs: number }
  | undefined => {
  const servedMicros = serviceCapacity(report, scenario)?.cpuMicrosPerRequest ?? 0
  const service = report.runs.filter(
    (run) =>
      run.scenario === scenario &&
      run.target === "service" &&
      run.counts.refused.count > 0 &&
      refusedNearlyAll(run) &&
      !generatorBehind(run),
  )
  if (service.length > 0) {
    const micros = median(service.map((run) => microsPerRefusal(run, servedMicros)))
    return { micros, from: "service", runs: service.length }
  }
  const floor = report.runs.filter(
    (run) => run.target === floorTarget && run.counts.refused.count > 0,
  )
  if (floor.length > 0)
    return {
      micros: median(floor.map((run) => microsPerRefusal(run))),
      from: "floor",
      runs: floor.length,
    }
  return undefined
}

/**
 * The most goodput (× capacity) admission control in the process can keep at `level` × capacity
 * when a refusal costs r of a served request (the issue's bound): the CPU that serves capacity,
 * spent on served requests and refusals, (1 − r·L)/(1 − r), between 0 and L.
 */
export const ceiling = (r: number, level: number) =>
  Math.max(0, Math.min(level, (1 - r * level) / (1 - r)))

/** What an answer cost the floor target, if it ran. */
const floorSentence = (runs: ReadonlyArray<OverloadRun>, cores: number): string => {
  const floor = runs.filter((run) => run.target === floorTarget && run.counts.refused.count > 0)
  if (floor.length === 0) return ""
  const micros = median(floor.map((run) => microsPerRefusal(run)))
  const share = median(floor.map((run) => run.cpuSeconds / run.wallSeconds / cores))
  const kernel = median(floor.map((run) => run.systemSeconds / run.cpuSeconds))
  return ` A bare \`node:http\` server answering the same pre-built 503 to every request at ${floor[0]?.level ?? ""}× (the row "${floorTarget}") spent ${format(micros, 1)} µs of CPU an answer, using ${format(share * 100, 0)} % of the quota: what any answer costs in Node here, ${format(kernel * 100, 0)} % of it in the kernel (reading the request, writing the answer over loopback TCP, waking the loop) and the rest in Node's HTTP parser and response.`
}

/** The refusal's cost, r and the ceilings it implies, beside the service's goodput at 2×. */
const ceilingSentence = (
  report: OverloadReport,
  scenario: OverloadRun["scenario"],
  runs: ReadonlyArray<OverloadRun>,
): string => {
  const cost = refusalCost(report, scenario)
  const atCapacity = serviceCapacity(report, scenario)
  const atTwo = runs.filter(
    (run) => run.target === "service" && run.level === 2 && !generatorBehind(run),
  )
  if (cost === undefined || atCapacity === undefined || atCapacity.cpuMicrosPerRequest <= 0)
    return ""
  const r = cost.micros / atCapacity.cpuMicrosPerRequest
  const costFrom =
    cost.from === "service"
      ? `the service's CPU in its ${cost.runs} run(s) of this scenario that refused nearly everything (at least 0.9 of what it answered), less what it served there at capacity's cost, over its refusals; median`
      : `the bare \`node:http\` server's, the service having no run that refused nearly everything`
  const achieved =
    atTwo.length === 0
      ? ""
      : ` At 2× the service's goodput is ${spreadOf(
          atTwo.map((run) => run.counts.served.count / report.settings.seconds / run.capacity),
          2,
        )} of capacity (median ${format(
          median(
            atTwo.map((run) => run.counts.served.count / report.settings.seconds / run.capacity),
          ) / ceiling(r, 2),
          2,
        )} of that ceiling; above it where a served request costs less under load than at capacity).`
  return `A refusal costs ${format(cost.micros, 1)} µs of CPU (${costFrom}) and a served request ${format(atCapacity.cpuMicrosPerRequest, 1)} µs at capacity: r = ${format(r, 2)}, and the goodput admission control in the process can keep at L× capacity is at most (1 − r·L)/(1 − r): ${report.settings.levels
    .filter((level) => level > 1)
    .map((level) => `${format(ceiling(r, level), 2)} at ${level}×`)
    .join(", ")}.${achieved}${floorSentence(runs, report.settings.cores)}`
}

/** How fast the servers' core was when capacity was searched (before each run: a column). */
const coreSpeedSentence = (report: OverloadReport, scenario: OverloadRun["scenario"]): string => {
  const searched = report.capacities
    .filter((capacity) => capacity.scenario === scenario)
    .map((capacity) => format(capacity.coreWorkMs, 0))
  return `The servers' core did a fixed piece of work (\`core-speed.ts\`) in ${searched.join(" and ")} ms before the capacity search, and in the last column's before each run: on a virtual machine the core's speed moves with the host's other guests, and a capacity found on a slower core is a lower one.`
}

/** A window's whole length, warm-up included. */
const wholeSeconds = (window: Window) => window.warmup + window.seconds

export const overloadMarkdown = (report: OverloadReport): string => {
  const { settings, search } = report
  const seconds = settings.seconds
  const lines: Array<string> = []
  lines.push(
    `Written by \`npm run overload -w @petstore/bench\` (\`overload.ts\`) in ${report.minutes.toFixed(1)} minutes on ${report.date.slice(0, 10)}; every run's figures are in \`results/overload.json\`. Machine: ${report.machine.nproc} CPUs (${report.machine.cpuModel}), Linux ${report.machine.kernel}; Node ${report.machine.node}. The service: ${report.service}. The 1-minute load average was ${report.loadAverageAtStart.toFixed(2)} when it started${report.waitedForQuietSeconds > 0 ? `, after ${Math.round(report.waitedForQuietSeconds)} s waiting for it to fall below 1` : ""} (${format(Math.min(...report.runs.map((run) => run.loadAverage)), 2)} to ${format(Math.max(...report.runs.map((run) => run.loadAverage)), 2)} after the runs, the machine's own load included).`,
  )
  lines.push("")
  lines.push(
    `Each server runs pinned to core 0 and held to ${Math.round(settings.cores * 100)} % of it by a cgroup v1 CPU quota (\`cpu.cfs_quota_us\` ${Math.round(settings.cores * 100_000)} of a 100,000 µs period), seeded with 1,000 pets; the generator runs pinned to core 1. Capacity is the highest open-loop rate a server serves whole with admission control off (every request answered 2xx, p99 within a quarter of the deadline; searched, after ${wholeSeconds(search.warmWindow)} s at a first guess to warm it, from that guess up by quarters, then the last step halved twice, ${search.window.seconds} s measured each after ${search.window.warmup} s unmeasured, a rate answered whole but late run twice and judged by the second, then confirmed by a run of ${search.sustainWindow.seconds} s measured, long enough to take in the garbage collector's major cycles, lowered by a tenth and run again at most ${search.confirmSteps} times until one is served whole (if none is, the last is taken, shown unconfirmed); the CPU per request shown is at that rate); the service and the service with it off share the capacity measured on the latter, and every server is then warmed at ${search.warmLevel}× its capacity for ${wholeSeconds(search.warmWindow)} s, as warm as the one whose capacity was searched (a process still compiling its hot paths on the same quota serves less). (A closed loop under-measures it here: its client, busy on the other core, slows the server's, and its standing queue costs more per request.) Each run is open-loop (\`open-loop-worker.ts\`, \`node:http\` with keep-alive, ${format(settings.connections, 0)} connections opened beforehand, kept and used in turn, as a load balancer's pool to the instance; a request finding them all busy waits at the generator, its deadline running): requests scheduled evenly at the level × capacity, ${settings.warmup} s of warm-up, then ${seconds} s measured, each request given up ${settings.deadlineMs} ms after its scheduled time (its connection closed). Goodput is the 2xx answered within that deadline a second, over capacity; latencies run from the scheduled time; \`/healthz\` is asked every 100 ms on a connection of its own, from the bench's process (not the generator's, whose lag would add to it), on the API's port and, for the service, on its probe port too (\`PETSTORE_PROBE_PORT\`, answered by a thread of its own); a probe that gets no answer within 5 s counts as failed. Server CPU is \`/proc/<pid>/stat\` over the measured window. Medians over ${settings.rounds} round(s), the range beside them.`,
  )
  for (const scenario of ["list20", "create"] as const) {
    const runs = report.runs.filter((run) => run.scenario === scenario)
    if (runs.length === 0) continue
    lines.push("", `**${scenarioTitles[scenario]}.** Capacity:`, "")
    lines.push(
      table(
        [
          "target",
          "capacity req/s",
          `served whole over ${search.sustainWindow.seconds} s`,
          "CPU µs/request there",
        ],
        report.capacities
          .filter((capacity) => capacity.scenario === scenario)
          .map((capacity) => [
            capacity.target,
            format(capacity.perSecond, 0),
            confirmationShown[capacity.confirmation],
            format(capacity.cpuMicrosPerRequest, 1),
          ]),
      ),
    )
    lines.push("", coreSpeedSentence(report, scenario))
    lines.push("")
    const targets = [...new Set(runs.map((run) => run.target))]
    const rows: Array<Array<string>> = []
    for (const target of targets) {
      for (const level of settings.levels) {
        const group = runs.filter((run) => run.target === target && run.level === level)
        if (group.length === 0) continue
        const over = (values: (run: OverloadRun) => number, digits: number, unit = "") =>
          spreadOf(group.map(values), digits, unit)
        rows.push([
          target,
          `${level}×${group.some(generatorBehind) ? " †" : ""}`,
          over((run) => run.rate, 0),
          over((run) => run.counts.served.count / seconds / run.capacity, 2),
          over((run) => run.counts.served.p99, 0, " ms"),
          over((run) => run.counts.refused.count / seconds, 0),
          group.some((run) => run.counts.refused.count > 0)
            ? over((run) => run.counts.refused.p99, 0, " ms")
            : "—",
          over((run) => (run.counts.timedOut + run.counts.failed) / seconds, 0),
          probeCell(group.map((run) => run.probes)),
          probeCell(group.flatMap((run) => run.probePortProbes ?? [])),
          over((run) => (run.cpuSeconds / run.wallSeconds / settings.cores) * 100, 0, " %"),
          over((run) => run.coreWorkMs, 0, " ms"),
        ])
      }
    }
    lines.push(
      table(
        [
          "target",
          "load",
          "offered req/s",
          "goodput × capacity",
          "served p99",
          "refused/s",
          "refused p99",
          "timed out or failed/s",
          "`/healthz` max",
          "probe port's `/healthz` max",
          "CPU of quota",
          "core's fixed work",
        ],
        rows,
      ),
    )
    if (runs.some(generatorBehind))
      lines.push(
        "",
        `† The generator fell behind its schedule in this run (its send lag's p99 above ${generatorBehindMs} ms, its CPU near a core, most of it reopening the connections of requests it gave up): the figures measure the generator as much as the server.`,
      )
    const sentence = ceilingSentence(report, scenario, runs)
    if (sentence !== "") lines.push("", sentence)
  }
  return lines.join("\n")
}
