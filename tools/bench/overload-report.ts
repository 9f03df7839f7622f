/** What overload.ts measured, and the `overload:results` block of RESULTS.md written from it. */
import type { Machine } from "./http-bench-environment.js"
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
  /** Server CPU (user + system, /proc) over the measured window. */
  readonly cpuSeconds: number
  readonly wallSeconds: number
  /** The share of the quota's periods in which the server was throttled. */
  readonly throttledShare: number
  /** The most connections seen waiting in the listening socket's accept queue (`ss`, every 100 ms). */
  readonly acceptQueueMax: number
  readonly loadAverage: number
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
  }>
  readonly runs: ReadonlyArray<OverloadRun>
}

const scenarioTitles = {
  list20: "`GET /v1/pets?limit=20` on the memory store",
  create: "`POST /v1/pets` on the SQLite file (durable creates)",
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

/** A tenth of the deadline: a generator sending this late is measuring itself. */
const generatorBehindMs = 100
const generatorBehind = (run: OverloadRun) => run.counts.sendLagP99 > generatorBehindMs

/** What a served request and a refusal cost under overload, on one scenario (µs of CPU). */
export interface RefusalCost {
  readonly servedMicros: number
  readonly refusalMicros: number
  readonly r: number
  /** The runs fitted. */
  readonly runs: number
}

/**
 * Fitted over the service's overloaded runs, each spending its whole quota: CPU = a × served +
 * b × refused, least squares. A served request's cost is fitted too, not taken at capacity: it
 * moves with the load (a loop turn that reads more requests shares its fixed cost among them),
 * and taken at capacity it once left refusals a cost below zero. Runs the generator fell
 * behind in are left out.
 */
export const refusalCost = (
  report: OverloadReport,
  scenario: OverloadRun["scenario"],
): RefusalCost | undefined => {
  const overloaded = report.runs.filter(
    (run) =>
      run.scenario === scenario &&
      run.target === "service" &&
      run.level > 1 &&
      run.counts.refused.count > 0 &&
      !generatorBehind(run),
  )
  const sums = { ss: 0, sf: 0, ff: 0, sc: 0, fc: 0 }
  for (const run of overloaded) {
    const served = run.counts.served.count
    const refused = run.counts.refused.count
    const micros = run.cpuSeconds * 1e6
    sums.ss += served * served
    sums.sf += served * refused
    sums.ff += refused * refused
    sums.sc += served * micros
    sums.fc += refused * micros
  }
  const determinant = sums.ss * sums.ff - sums.sf * sums.sf
  if (overloaded.length < 2 || determinant <= 0) return undefined
  const servedMicros = (sums.sc * sums.ff - sums.sf * sums.fc) / determinant
  const refusalMicros = (sums.ss * sums.fc - sums.sf * sums.sc) / determinant
  if (servedMicros <= refusalMicros || refusalMicros < 0) return undefined
  return { servedMicros, refusalMicros, r: refusalMicros / servedMicros, runs: overloaded.length }
}

/**
 * The most goodput (× capacity) the quota's CPU allows at `level` when served requests and
 * refusals cost what `cost` says: Q = a × served + b × (offered − served), solved for served.
 */
export const ceiling = (
  cost: RefusalCost,
  quotaMicros: number,
  capacity: number,
  level: number,
) => {
  const offered = level * capacity
  const served =
    (quotaMicros - cost.refusalMicros * offered) / (cost.servedMicros - cost.refusalMicros)
  return Math.max(0, Math.min(offered, served)) / capacity
}

/** The bare `node:http` server that answers the service's refusal to every request. */
export const floorTarget = "node:http, refusing all"

/** What an answer cost the floor target, if it ran. */
const floorSentence = (runs: ReadonlyArray<OverloadRun>, cores: number): string => {
  const floor = runs.filter((run) => run.target === floorTarget && run.counts.refused.count > 0)
  if (floor.length === 0) return ""
  const micros = median(floor.map((run) => (run.cpuSeconds * 1e6) / run.counts.refused.count))
  const share = median(floor.map((run) => run.cpuSeconds / run.wallSeconds / cores))
  return ` A bare \`node:http\` server answering the same pre-built 503 to every request at 2× (the row "${floorTarget}") spent ${format(micros, 1)} µs of CPU an answer, using ${format(share * 100, 0)} % of the quota (a process that is not saturated reads fewer requests a loop turn, each turn's fixed cost shared by fewer).`
}

export const overloadMarkdown = (report: OverloadReport): string => {
  const { settings } = report
  const seconds = settings.seconds
  const lines: Array<string> = []
  lines.push(
    `Written by \`npm run overload -w @petstore/bench\` (\`overload.ts\`) in ${report.minutes.toFixed(1)} minutes on ${report.date.slice(0, 10)}; every run's figures are in \`results/overload.json\`. Machine: ${report.machine.nproc} CPUs (${report.machine.cpuModel}), Linux ${report.machine.kernel}; Node ${report.machine.node}. The service: ${report.service}. The 1-minute load average was ${report.loadAverageAtStart.toFixed(2)} when it started${report.waitedForQuietSeconds > 0 ? `, after ${Math.round(report.waitedForQuietSeconds)} s waiting for it to fall below 1` : ""} (${format(Math.min(...report.runs.map((run) => run.loadAverage)), 2)} to ${format(Math.max(...report.runs.map((run) => run.loadAverage)), 2)} after the runs, the machine's own load included).`,
  )
  lines.push("")
  lines.push(
    `Each server runs pinned to core 0 and held to ${Math.round(settings.cores * 100)} % of it by a cgroup v1 CPU quota (\`cpu.cfs_quota_us\` ${Math.round(settings.cores * 100_000)} of a 100,000 µs period), seeded with 1,000 pets; the generator runs pinned to core 1. Capacity is the highest open-loop rate a server serves whole with admission control off (every request answered 2xx, p99 within a quarter of the deadline; searched, after 8 s at a first guess to warm it, from that guess up by quarters, then the last step halved twice, 3 s measured each, then confirmed by a run as long as the measured ones, lowered by a tenth until served whole; the CPU per request shown is at that rate); the service and the service with it off share the capacity measured on the latter, and every server is then warmed at 0.7× its capacity for 8 s, as warm as the one whose capacity was searched (a process still compiling its hot paths on the same quota serves less). (A closed loop under-measures it here: its client, busy on the other core, slows the server's, and its standing queue costs more per request.) Each run is open-loop (\`open-loop-worker.ts\`, \`node:http\` with keep-alive, ${format(settings.connections, 0)} connections opened beforehand, kept and used in turn, as a load balancer's pool to the instance; a request finding them all busy waits at the generator, its deadline running): requests scheduled evenly at the level × capacity, ${settings.warmup} s of warm-up, then ${seconds} s measured, each request given up ${settings.deadlineMs} ms after its scheduled time (its connection closed). Goodput is the 2xx answered within that deadline a second, over capacity; latencies run from the scheduled time; \`/healthz\` is asked every 100 ms on a connection of its own. Server CPU is \`/proc/<pid>/stat\` over the measured window. Medians over ${settings.rounds} round(s), the range beside them.`,
  )
  for (const scenario of ["list20", "create"] as const) {
    const runs = report.runs.filter((run) => run.scenario === scenario)
    if (runs.length === 0) continue
    lines.push("", `**${scenarioTitles[scenario]}.** Capacity:`, "")
    lines.push(
      table(
        ["target", "capacity req/s", "CPU µs/request there"],
        report.capacities
          .filter((capacity) => capacity.scenario === scenario)
          .map((capacity) => [
            capacity.target,
            format(capacity.perSecond, 0),
            format(capacity.cpuMicrosPerRequest, 1),
          ]),
      ),
    )
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
          over((run) => run.counts.probes.max, 0, " ms"),
          over((run) => (run.cpuSeconds / run.wallSeconds / settings.cores) * 100, 0, " %"),
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
          "CPU of quota",
        ],
        rows,
      ),
    )
    if (runs.some(generatorBehind))
      lines.push(
        "",
        `† The generator fell behind its schedule in this run (its send lag's p99 above ${generatorBehindMs} ms, its CPU near a core, most of it reopening the connections of requests it gave up): the figures measure the generator as much as the server.`,
      )
    const cost = refusalCost(report, scenario)
    const atTwo = runs.filter((run) => run.target === "service" && run.level === 2)
    if (cost !== undefined && atTwo.length > 0) {
      const quotaMicros = settings.cores * 1e6
      const capacity = median(atTwo.map((run) => run.capacity))
      const achieved = median(atTwo.map((run) => run.counts.served.count / seconds / run.capacity))
      const limitAt = (level: number) => ceiling(cost, quotaMicros, capacity, level)
      const atCapacity = report.capacities.find(
        (found) => found.scenario === scenario && found.target === "service, admission off",
      )
      lines.push(
        "",
        `Fitted over the service's ${cost.runs} overloaded runs (its CPU = a × served + b × refused, least squares): a served request costs ${format(cost.servedMicros, 1)} µs there and a refusal ${format(cost.refusalMicros, 1)} µs, r = ${format(cost.r, 3)}${atCapacity === undefined || atCapacity.cpuMicrosPerRequest <= 0 ? "" : ` (at capacity, below overload, a served request cost ${format(atCapacity.cpuMicrosPerRequest, 1)} µs)`}. With ${format(quotaMicros, 0)} µs of CPU a second, the most it can serve at L× capacity is (Q − b·L·C)/(a − b), at most L·C: ${settings.levels
          .filter((level) => level > 1)
          .map((level) => `${format(limitAt(level), 2)} at ${level}×`)
          .join(
            ", ",
          )} (× capacity). At 2× the service's goodput is ${format(achieved, 2)} of capacity: ${format(achieved / limitAt(2), 2)} of that ceiling.${floorSentence(runs, settings.cores)}`,
      )
    }
  }
  return lines.join("\n")
}
