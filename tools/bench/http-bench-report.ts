/**
 * The figures http-bench.ts gathers (the schema of results/http-bench.json), the targets they are
 * read against, and the Markdown blocks written into RESULTS.md between its `http-bench`
 * markers (results-markdown.ts). Every block is rendered from the report alone, so
 * http-bench-render.ts can write them again from the JSON without running anything.
 */
import { Either, Option, Schema } from "effect"
import { format, median, show, spread, table } from "./statistics.js"

/** One measured run of one scenario on one target. */
export const Run = Schema.Struct({
  target: Schema.String,
  scenario: Schema.String,
  round: Schema.Number,
  connections: Schema.Number,
  requests: Schema.Number,
  requestsPerSecond: Schema.Number,
  /** Server CPU time (user + system, every thread) over the run, per response. */
  cpuMicrosPerRequest: Schema.Number,
  /** Server CPU time over wall time: near 1 when the server, not the load, was the limit. */
  serverCpuShare: Schema.Number,
  /** The part of the server's CPU time spent in the kernel (system time). */
  kernelShare: Schema.Number,
  latencyP50: Schema.Number,
  latencyP99: Schema.Number,
})
export type Run = typeof Run.Type

const Percentiles = Schema.Struct({ p50: Schema.Number, p99: Schema.Number })

/** One round of durable creates at one connection (lone-creates.ts). */
const LoneCreatesRound = Schema.Struct({
  creates: Schema.Number,
  serviceCpuMicrosPerCreate: Schema.Number,
  serviceKernelShare: Schema.Number,
  serviceLatencyMicros: Percentiles,
  rawCpuMicrosPerCommit: Schema.Number,
  rawLatencyMicros: Percentiles,
  floorCpuMicrosPerCreate: Schema.Number,
  floorLatencyMicros: Percentiles,
})

export const Report = Schema.Struct({
  /** When the run ended (ISO 8601): kept here, not in RESULTS.md. */
  date: Schema.String,
  command: Schema.String,
  mode: Schema.String,
  settings: Schema.Record({
    key: Schema.String,
    value: Schema.Union(Schema.Number, Schema.Boolean),
  }),
  machine: Schema.Struct({
    nproc: Schema.Number,
    cpuModel: Schema.String,
    memoryGiB: Schema.Number,
    node: Schema.String,
    kernel: Schema.String,
  }),
  versions: Schema.Record({ key: Schema.String, value: Schema.String }),
  service: Schema.Struct({ description: Schema.String, warnings: Schema.Array(Schema.String) }),
  scenarios: Schema.Array(Schema.Struct({ id: Schema.String, title: Schema.String })),
  targets: Schema.Array(Schema.String),
  runs: Schema.Array(Run),
  mismatches: Schema.Array(
    Schema.Struct({ target: Schema.String, request: Schema.String, difference: Schema.String }),
  ),
  /** The service as benchmarked beside one with its access log and rate limits on. */
  operations: Schema.Array(Run),
  /** The service beside itself with admission control off (absent from reports before it). */
  admission: Schema.optional(Schema.Array(Run)),
  /** The service beside itself with every request traced (and, if given, other builds). */
  tracing: Schema.optional(
    Schema.Struct({
      runs: Schema.Array(Run),
      /** Exports the local OTLP receiver took, and their bytes. */
      exports: Schema.Number,
      exportedBytes: Schema.Number,
      /** Other builds run beside it (`BENCH_BEFORE`). */
      before: Schema.Array(
        Schema.Struct({ target: Schema.String, path: Schema.String, main: Schema.String }),
      ),
    }),
  ),
  creates: Schema.Array(Run),
  /** Durable creates at one connection beside better-sqlite3 alone. */
  loneCreates: Schema.optional(Schema.Array(LoneCreatesRound)),
  /** The layers under a durable create, measured in one process. */
  durableCreateLayers: Schema.optional(
    Schema.Array(Schema.Struct({ name: Schema.String, cpuMicros: Schema.Array(Schema.Number) })),
  ),
  rss: Schema.Struct({
    seconds: Schema.Number,
    /** The mix ran this long before the measured run… */
    warmupSeconds: Schema.Number,
    /** …and the server made two full collections meanwhile (else the warm-up hit its limit). */
    collectedDuringWarmup: Schema.Boolean,
    /** Full collections during the measured run. */
    fullCollections: Schema.Number,
    requests: Schema.Number,
    requestsPerSecond: Schema.Number,
    cpuMicrosPerRequest: Schema.Number,
    startKiB: Schema.Number,
    endKiB: Schema.Number,
    maxKiB: Schema.Number,
    samplesKiB: Schema.Array(Schema.Number),
  }),
  memoryPerPet: Schema.Array(
    Schema.Struct({
      target: Schema.String,
      pets: Schema.Number,
      beforeKiB: Schema.Number,
      afterKiB: Schema.Number,
      bytesPerPet: Schema.Number,
      createsPerSecond: Schema.Number,
    }),
  ),
  listScale: Schema.optional(Schema.Struct({ ok: Schema.Boolean, output: Schema.String })),
  minutes: Schema.Number,
})
export type Report = typeof Report.Type

/** A results file's text as a report, or why it is not one. */
export const decodeReport = (json: string): Either.Either<Report, string> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(Schema.parseJson(Report))(json),
    (error) => error.message,
  )

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`
const times = (value: number) => `${format(value, 2)}×`

/** The runs of one target and scenario (and connection count), in round order. */
const select = (
  runs: ReadonlyArray<Run>,
  target: string,
  scenario: string,
  connections?: number,
): Array<Run> =>
  runs.filter(
    (run) =>
      run.target === target &&
      run.scenario === scenario &&
      (connections === undefined || run.connections === connections),
  )

/** Per-round ratios of a figure of `a` to that of `b` (rounds both measured). */
const roundRatios = (
  as: ReadonlyArray<Run>,
  bs: ReadonlyArray<Run>,
  figure: (run: Run) => number,
) =>
  as.flatMap((a) => {
    const b = bs.find((run) => run.round === a.round)
    return b === undefined ? [] : [figure(a) / figure(b)]
  })

const cpu = (run: Run) => run.cpuMicrosPerRequest
const percent = (runs: ReadonlyArray<Run>) =>
  `${format(median(runs.map((run) => run.kernelShare * 100)), 0)} %`
const throughput = (run: Run) => run.requestsPerSecond

/** The target every other is compared with, and the operated Koa baseline's name. */
const serviceOf = (report: Report) => report.targets[0] ?? "service"
const operatedKoa = "koa, operated"

// ---------------------------------------------------------------------------------------------
// The targets

/** The hand-written sections of RESULTS.md that read the targets, by their headings' anchors. */
export const sections = {
  koa: "#the-memory-path-against-koa",
  lone: "#a-lone-durable-create",
  durable: "#durable-creates-at-32-connections",
  scale: "#listing-at-scale",
  memory: "#memory-over-time",
  operations: "#what-the-access-log-and-the-rate-limiter-cost",
  admission: "#what-admission-control-costs-below-capacity",
  tracing: "#what-tracing-costs",
} as const

export type Status = "met" | "missed" | "reported" | "not measured"

export interface TargetResult {
  readonly target: string
  readonly figure: string
  readonly status: Status
  /** The RESULTS.md section (its anchor) that reads it. */
  readonly section: string
}

const judged = (met: boolean): Status => (met ? "met" : "missed")
const notMeasured = (target: string, section: string, why: string): TargetResult => ({
  target,
  figure: why,
  status: "not measured",
  section,
})

/** The memory path's CPU per request over Koa as operated's, per scenario (median ratio). */
const overOperatedKoa = (report: Report, scenario: string) =>
  median(
    roundRatios(
      select(report.runs, serviceOf(report), scenario),
      select(report.runs, operatedKoa, scenario),
      cpu,
    ),
  )

/** The median ratios of list-scale.ts's "ratio 1M / 1k" rows, per table and engine, in order. */
const listScaleRatios = (
  output: string,
): ReadonlyArray<{ readonly engine: string; readonly median: number }> => {
  const ratios: Array<{ engine: string; median: number }> = []
  let engine = ""
  for (const line of output.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim())
    if (cells.length < 5) continue
    const [, first = "", second = "", third = ""] = cells
    if (first !== "" && first !== "engine" && !first.startsWith("-")) engine = first
    if (second === "ratio 1M / 1k") ratios.push({ engine, median: Number.parseFloat(third) })
  }
  return ratios
}

const koaTarget = (report: Report): TargetResult => {
  const target = "`list20`, `get`, `create` on memory ≤ 0.8× Koa as operated (CPU per request)"
  const section = sections.koa
  if (!report.targets.includes(operatedKoa))
    return notMeasured(target, section, "no operated Koa baseline in this run")
  const judgedIds = ["list20", "get", "create"]
  const ratios = report.scenarios.map((scenario) => ({
    id: scenario.id,
    ratio: overOperatedKoa(report, scenario.id),
  }))
  const shown = (entries: ReadonlyArray<{ id: string; ratio: number }>) =>
    entries.map((entry) => `${entry.id} ${times(entry.ratio)}`).join(", ")
  const judgedRatios = ratios.filter((entry) => judgedIds.includes(entry.id))
  const others = ratios.filter((entry) => !judgedIds.includes(entry.id))
  return {
    target,
    figure: `${shown(judgedRatios)}${others.length === 0 ? "" : `; ${shown(others)}`}`,
    status: judged(judgedRatios.every((entry) => entry.ratio <= 0.8)),
    section,
  }
}

const loneTargets = (report: Report): ReadonlyArray<TargetResult> => {
  const section = sections.lone
  const cpuTarget = "A lone durable create ≤ 300 µs of server CPU"
  const p50Target = "Its p50 ≤ 1.5× better-sqlite3 alone's"
  const lone = report.loneCreates ?? []
  if (lone.length === 0)
    return [
      notMeasured(cpuTarget, section, "not in this run"),
      notMeasured(p50Target, section, "not in this run"),
    ]
  const cpuMicros = median(lone.map((round) => round.serviceCpuMicrosPerCreate))
  const ratio = median(
    lone.map((round) => round.serviceLatencyMicros.p50 / round.rawLatencyMicros.p50),
  )
  const floor = median(
    lone.map(
      (round) =>
        (round.floorLatencyMicros.p50 + round.rawLatencyMicros.p50) / round.rawLatencyMicros.p50,
    ),
  )
  return [
    {
      target: cpuTarget,
      figure: `${format(cpuMicros, 0)} µs`,
      status: judged(cpuMicros <= 300),
      section,
    },
    {
      target: p50Target,
      figure: `${times(ratio)}; the floor, node:http's create plus the commit, ${times(floor)}`,
      status: judged(ratio <= 1.5),
      section,
    },
  ]
}

const durableTarget = (report: Report): TargetResult => {
  const target = "SQLite ≥ 0.8× memory's creates/s at 32 connections"
  const section = sections.durable
  const [memory = "", sqlite = ""] = [...new Set(report.creates.map((run) => run.target))]
  const ratios = roundRatios(
    select(report.creates, sqlite, "create", 32),
    select(report.creates, memory, "create", 32),
    throughput,
  )
  if (ratios.length === 0) return notMeasured(target, section, "not at 32 connections in this run")
  return {
    target,
    figure: times(median(ratios)),
    status: judged(median(ratios) >= 0.8),
    section,
  }
}

const scaleTarget = (report: Report): TargetResult => {
  const target = "A page at 1,000,000 pets ≤ 1.2× its cost at 1,000 (median)"
  const section = sections.scale
  if (report.listScale === undefined)
    return notMeasured(target, section, "not run (quick mode or `BENCH_LIST_SCALE=0`)")
  if (!report.listScale.ok) return notMeasured(target, section, "list-scale.ts failed")
  const ratios = listScaleRatios(report.listScale.output)
  if (ratios.length === 0)
    return notMeasured(target, section, "no ratio row in list-scale.ts's output")
  const engines = [...new Set(ratios.map((ratio) => ratio.engine))]
  const byEngine = engines
    .map(
      (engine) =>
        `${engine} ${ratios
          .filter((ratio) => ratio.engine === engine)
          .map((ratio) => times(ratio.median))
          .join(" / ")}`,
    )
    .join(", ")
  return {
    target,
    figure: `${byEngine}, full pages / an empty page`,
    status: judged(ratios.every((ratio) => ratio.median <= 1.2)),
    section,
  }
}

/** RSS may move this much over the measured run and still count as no growth. */
const rssToleranceMiB = 2

const rssTarget = (report: Report): TargetResult => {
  const { rss } = report
  const grownMiB = (rss.endKiB - rss.startKiB) / 1024
  return {
    target: `No RSS growth over ${rss.seconds} s of mixed load (end − start under ${rssToleranceMiB} MiB, heap settled)`,
    figure: `${grownMiB >= 0 ? "+" : "−"}${format(Math.abs(grownMiB), 1)} MiB${rss.collectedDuringWarmup ? "" : ", but the warm-up hit its limit before the heap settled"}`,
    status: rss.collectedDuringWarmup ? judged(grownMiB < rssToleranceMiB) : "not measured",
    section: sections.memory,
  }
}

/** What each non-reference target of a cost phase adds per request, over the scenarios. */
const addedRange = (runs: ReadonlyArray<Run>, reference: string, target: string): string => {
  const added = [...new Set(runs.map((run) => run.scenario))].map(
    (scenario) =>
      median(select(runs, target, scenario).map(cpu)) -
      median(select(runs, reference, scenario).map(cpu)),
  )
  const signed = (value: number) => `${value < 0 ? "−" : "+"}${format(Math.abs(value), 0)}`
  return `${signed(Math.min(...added))} to ${signed(Math.max(...added))} µs a request`
}

const costTargets = (report: Report): ReadonlyArray<TargetResult> => {
  const service = serviceOf(report)
  const operationTargets = [...new Set(report.operations.map((run) => run.target))].slice(1)
  const tracing = report.tracing
  const traced = tracing === undefined ? [] : [...new Set(tracing.runs.map((run) => run.target))]
  const [, tracedTarget, ...beforeTargets] = traced
  const results: Array<TargetResult> = operationTargets.map((target) => ({
    target: `What "${target}" costs`,
    figure: addedRange(report.operations, service, target),
    status: "reported",
    section: sections.operations,
  }))
  const admission = report.admission ?? []
  const [admissionOff] = [...new Set(admission.map((run) => run.target))]
  if (admissionOff !== undefined)
    results.push({
      target: "What admission control costs below capacity",
      figure: addedRange(admission, admissionOff, service),
      status: "reported",
      section: sections.admission,
    })
  const section = sections.tracing
  if (tracing !== undefined && tracedTarget !== undefined)
    results.push({
      target: "What tracing every request costs",
      figure: addedRange(tracing.runs, service, tracedTarget),
      status: "reported",
      section,
    })
  const offTarget =
    "Tracing off costs nothing (CPU per request, the build before tracing ÷ this one)"
  if (beforeTargets.length === 0)
    results.push(notMeasured(offTarget, section, "needs `BENCH_BEFORE`; see the section"))
  else
    for (const before of beforeTargets)
      results.push({
        target: `${offTarget}: ${before}`,
        figure: report.scenarios
          .map((scenario) => ({
            id: scenario.id,
            ratio: median(
              roundRatios(
                select(tracing?.runs ?? [], before, scenario.id),
                select(tracing?.runs ?? [], service, scenario.id),
                cpu,
              ),
            ),
          }))
          .filter((entry) => !Number.isNaN(entry.ratio))
          .map((entry) => `${entry.id} ${times(entry.ratio)}`)
          .join(", "),
        status: "reported",
        section,
      })
  return results
}

/** Every target, with this report's figure and whether it was met. */
export const targetResults = (report: Report): ReadonlyArray<TargetResult> => [
  koaTarget(report),
  ...loneTargets(report),
  durableTarget(report),
  scaleTarget(report),
  rssTarget(report),
  ...costTargets(report),
]

/** "Target: … — **missed** (latest: …)." for each target a section reads. */
const statusLines = (results: ReadonlyArray<TargetResult>, section: string): string =>
  results
    .filter((result) => result.section === section && result.status !== "reported")
    .map((result) => `Target: ${result.target} — **${result.status}** (latest: ${result.figure}).`)
    .join("\n\n")

// ---------------------------------------------------------------------------------------------
// The blocks

/** The generated blocks of RESULTS.md, in the order the file holds them. */
export const blockNames = [
  "run",
  "targets",
  "comparison",
  "lone-creates",
  "layers",
  "durable-creates",
  "list-scale",
  "memory",
  "operations",
  "admission",
  "tracing",
] as const
export type BlockName = (typeof blockNames)[number]

/** Each block's Markdown; `undefined` where this report has nothing for it (the block is kept). */
export type Blocks = Readonly<Record<BlockName, string | undefined>>

const paragraphs = (...parts: ReadonlyArray<string>) =>
  parts.filter((part) => part !== "").join("\n\n")

/**
 * The first target's figures per scenario, then each other target's with what it adds per
 * request (per round, against the first target's run of the same round) and the ratio.
 */
const costTable = (
  runs: ReadonlyArray<Run>,
  scenarios: ReadonlyArray<{ readonly id: string; readonly title: string }>,
): string => {
  const [reference = "", ...others] = [...new Set(runs.map((run) => run.target))]
  const measured = scenarios.filter((scenario) => runs.some((run) => run.scenario === scenario.id))
  const p50 = (run: Run) => run.latencyP50
  return table(
    ["scenario", "target", "CPU µs/req", "added µs/req", "ratio", "p50 latency", "added p50"],
    measured.flatMap((scenario) => {
      const referenceRuns = select(runs, reference, scenario.id)
      return [
        [
          scenario.title,
          reference,
          show(spread(referenceRuns.map(cpu)), 1),
          "",
          "",
          `${show(spread(referenceRuns.map(p50)), 2)} ms`,
          "",
        ],
        ...others.map((other) => {
          const otherRuns = select(runs, other, scenario.id)
          const added = (measure: (run: Run) => number) =>
            otherRuns.flatMap((run) => {
              const same = referenceRuns.find((referenceRun) => referenceRun.round === run.round)
              return same === undefined ? [] : [measure(run) - measure(same)]
            })
          return [
            "",
            other,
            show(spread(otherRuns.map(cpu)), 1),
            show(spread(added(cpu)), 1),
            show(spread(roundRatios(otherRuns, referenceRuns, cpu)), 2, "×"),
            `${show(spread(otherRuns.map(p50)), 2)} ms`,
            `${show(spread(added(p50)), 2)} ms`,
          ]
        }),
      ]
    }),
  )
}

const runBlock = (report: Report): string => {
  const { settings } = report
  const unsaturated = [...report.runs, ...report.creates].filter(
    (run) => run.connections >= 32 && run.serverCpuShare < 0.9,
  )
  const saturatedRuns = [...report.runs, ...report.creates].filter((run) => run.connections >= 32)
  const byTarget = [...new Set(unsaturated.map((run) => run.target))]
    .map((target) => `${target} ${unsaturated.filter((run) => run.target === target).length}`)
    .join(", ")
  return paragraphs(
    `Written by \`${report.command}\` in ${format(report.minutes, 1)} minutes; its date, settings and every round's figures are in \`results/http-bench.json\`. Machine: ${report.machine.nproc} CPUs (${report.machine.cpuModel}), ${report.machine.memoryGiB} GiB, Linux ${report.machine.kernel}; Node ${report.machine.node}. Packages: ${Object.entries(
      report.versions,
    )
      .map(([name, version]) => `${name} ${version}`)
      .join(", ")}. The service: ${report.service.description}.`,
    `Each server runs pinned to core 0 (\`taskset -c 0\`), seeded with ${format(Number(settings["seedPets"]), 0)} pets through \`POST /v1/pets\`; autocannon runs in one process pinned to core 1, ${settings["connections"]} connections unless said otherwise, ${settings["warmup"]} s of warm-up before each ${settings["seconds"]} s measured run (at most 1 s from the second round); ${settings["rounds"]} round(s), the targets interleaved in each. CPU per request is the server process's utime + stime (\`/proc/<pid>/stat\`) over the measured run, divided by its responses. Figures are medians over the rounds, (min–max) beside them.`,
    ...report.service.warnings.map((warning) => `> **Warning:** ${warning}.`),
    unsaturated.length === 0
      ? ""
      : `> **Note:** in ${unsaturated.length} of the ${saturatedRuns.length} runs at ${settings["connections"]} connections the server used less than 90 % of its core (${byTarget}): something else limited them (the load generator's one core, or another process), so their req/s understate. CPU per request is less affected.`,
  )
}

const targetsBlock = (report: Report): string =>
  table(
    ["target", "latest", "status"],
    targetResults(report).map((result) => [
      `[${result.target}](${result.section})`,
      result.figure,
      result.status === "met" || result.status === "missed"
        ? `**${result.status}**`
        : result.status,
    ]),
  )

/** Per scenario: bare Koa ÷ operated Koa, and the µs above bare Koa at 0.8×, operated, service. */
const budgetTable = (report: Report): string | undefined => {
  const bare = "koa"
  if (!report.targets.includes(bare) || !report.targets.includes(operatedKoa)) return undefined
  const cpuOf = (target: string, scenario: string) =>
    median(select(report.runs, target, scenario).map(cpu))
  const micros = (value: number) => format(value, 1)
  return table(
    [
      "scenario",
      "bare Koa ÷ Koa as operated",
      "left above bare Koa at 0.8×",
      "Koa as operated above bare Koa",
      "the service above bare Koa",
    ],
    report.scenarios.map((scenario) => {
      const bareCpu = cpuOf(bare, scenario.id)
      const operatedCpu = cpuOf(operatedKoa, scenario.id)
      return [
        `\`${scenario.id}\``,
        times(bareCpu / operatedCpu),
        micros(0.8 * operatedCpu - bareCpu),
        micros(operatedCpu - bareCpu),
        micros(cpuOf(serviceOf(report), scenario.id) - bareCpu),
      ]
    }),
  )
}

const comparisonBlock = (report: Report, results: ReadonlyArray<TargetResult>): string => {
  const service = serviceOf(report)
  const baselines = report.targets.slice(1)
  const rows: Array<Array<string>> = []
  for (const scenario of report.scenarios) {
    for (const target of report.targets) {
      const runs = select(report.runs, target, scenario.id)
      if (runs.length === 0) continue
      rows.push([
        target === report.targets[0] ? `${scenario.title} (\`${scenario.id}\`)` : "",
        target,
        show(spread(runs.map(throughput)), 0),
        show(spread(runs.map(cpu)), 1),
        `${format(median(runs.map((run) => run.serverCpuShare * 100)), 0)} %`,
        `${format(median(runs.map((run) => run.latencyP99)), 1)} ms`,
      ])
    }
  }
  const ratios = table(
    ["scenario", ...baselines.map((baseline) => `service ÷ ${baseline}`)],
    report.scenarios.map((scenario) => [
      `\`${scenario.id}\``,
      ...baselines.map((baseline) => {
        const perRound = roundRatios(
          select(report.runs, service, scenario.id),
          select(report.runs, baseline, scenario.id),
          cpu,
        )
        return perRound.length === 0 ? "–" : show(spread(perRound), 2, "×")
      }),
    ]),
  )
  const budget = budgetTable(report)
  const conformance =
    report.mismatches.length === 0
      ? "Every baseline answered the probes of `http-bench-checks.ts` as the service did."
      : [
          `Where the baselines' answers differ from the service's (${report.mismatches.length} of the probes in \`http-bench-checks.ts\`; none is a measured request):`,
          "",
          ...report.mismatches.map(
            (mismatch) => `- ${mismatch.target}, \`${mismatch.request}\`: ${mismatch.difference}`,
          ),
        ].join("\n")
  return paragraphs(
    `\`${report.command}\`, its first phase: the service (\`PETSTORE_STORAGE=memory\`, \`PETSTORE_LOG_LEVEL=warn\`, \`PETSTORE_RATE_LIMIT=off\`, since the baselines neither log nor limit) beside the four baselines of \`tools/bench/baselines/\`. "server CPU" is the server's CPU time over the run's wall time.`,
    table(["scenario", "target", "req/s", "CPU µs/request", "server CPU", "p99 latency"], rows),
    "The service's CPU per request over each baseline's (median of the per-round ratios, min–max); below 1.00× the service is cheaper:",
    ratios,
    conformance,
    statusLines(results, sections.koa),
    budget === undefined
      ? ""
      : "What 0.8× of Koa as operated leaves the service for all it does that bare Koa does not (request ids, headers, the key compared in constant time, the histogram, validation, the codecs, the Effect run), beside what the operated baseline and the service spend on that work (µs of CPU per request, medians):",
    budget ?? "",
  )
}

const loneCreatesBlock = (
  report: Report,
  results: ReadonlyArray<TargetResult>,
): string | undefined => {
  const lone = report.loneCreates ?? []
  if (lone.length === 0) return undefined
  const ratio = (round: (typeof lone)[number]) =>
    round.serviceLatencyMicros.p50 / round.rawLatencyMicros.p50
  const floorRatio = (round: (typeof lone)[number]) =>
    (round.floorLatencyMicros.p50 + round.rawLatencyMicros.p50) / round.rawLatencyMicros.p50
  const p50p99 = (pick: (round: (typeof lone)[number]) => { p50: number; p99: number }) =>
    `${format(median(lone.map((round) => pick(round).p50)), 0)} / ${format(median(lone.map((round) => pick(round).p99)), 0)}`
  return paragraphs(
    `\`${report.command}\`, its lone-creates phase (\`lone-creates.ts\`): a fresh server on an SQLite file (WAL, \`synchronous=FULL\`); a client pinned to core 1 sends ${format(lone[0]?.creates ?? 0, 0)} creates a round one after another over one kept-alive connection (as many before, in the first round, to warm up), timing each to the end of its 201. Beside it, on the same file while the server is idle, better-sqlite3 alone pinned to core 0 inserts and commits one pet at a time (\`BEGIN IMMEDIATE\`, the service's \`INSERT … RETURNING\`, \`COMMIT\`), and the same client times the node:http baseline's create (memory, nothing to commit): that round trip plus better-sqlite3's commit is what a service on Node's \`http\` with a storage stack costing nothing would answer in.`,
    table(
      [
        "service CPU µs/create",
        "kernel share",
        "service p50 / p99 µs",
        "better-sqlite3 alone p50 / p99 µs",
        "better-sqlite3 CPU µs/commit",
        "p50 service ÷ better-sqlite3",
      ],
      [
        [
          show(spread(lone.map((round) => round.serviceCpuMicrosPerCreate)), 0),
          `${format(median(lone.map((round) => round.serviceKernelShare * 100)), 0)} %`,
          p50p99((round) => round.serviceLatencyMicros),
          p50p99((round) => round.rawLatencyMicros),
          show(spread(lone.map((round) => round.rawCpuMicrosPerCommit)), 0),
          show(spread(lone.map(ratio)), 2, "×"),
        ],
      ],
    ),
    table(
      [
        "node:http CPU µs/create",
        "node:http p50 / p99 µs",
        "floor CPU µs/create (node:http + better-sqlite3)",
        "floor p50 ÷ better-sqlite3 p50",
      ],
      [
        [
          show(spread(lone.map((round) => round.floorCpuMicrosPerCreate)), 0),
          p50p99((round) => round.floorLatencyMicros),
          show(
            spread(
              lone.map((round) => round.floorCpuMicrosPerCreate + round.rawCpuMicrosPerCommit),
            ),
            0,
          ),
          show(spread(lone.map(floorRatio)), 2, "×"),
        ],
      ],
    ),
    statusLines(results, sections.lone),
  )
}

const layersBlock = (report: Report): string | undefined => {
  const layers = report.durableCreateLayers ?? []
  if (layers.length === 0) return undefined
  const added = (index: number) =>
    median(layers[index]?.cpuMicros ?? []) - median(layers[index - 1]?.cpuMicros ?? [])
  const signed = (value: number) => `${value < 0 ? "−" : "+"}${format(Math.abs(value), 1)}`
  return paragraphs(
    `\`${report.command}\`, its layers phase (\`durable-create-layers.ts\`): one process pinned to core 0, a fresh SQLite file (WAL, \`synchronous=FULL\`, the service's schema), creates one after another at each layer of the stack, the layers interleaved round by round. \`driver\`: better-sqlite3 running the service's \`INSERT … RETURNING\` (its own transaction, as the service's batch without keys is). \`connection\`: through @effect/sql's connection, held reserved (its prepared-statement cache and driver call, in a fiber). \`statement\`: through the \`SqlClient\` as the repository runs it, span off (a connection acquired per statement). \`repository\`: \`PetRepository.create\`, group commit included. \`use case\`: \`createPet\`, as the HTTP handler runs it.`,
    table(
      ["layer", "CPU µs/create", "over the layer below"],
      layers.map((layer, index) => [
        layer.name,
        show(spread(layer.cpuMicros), 1),
        index === 0 ? "" : signed(added(index)),
      ]),
    ),
  )
}

const durableCreatesBlock = (report: Report, results: ReadonlyArray<TargetResult>): string => {
  const [memory = "", sqlite = ""] = [...new Set(report.creates.map((run) => run.target))]
  const connections = [...new Set(report.creates.map((run) => run.connections))]
  return paragraphs(
    `\`${report.command}\`, its creates phase: the same build on memory and on a fresh SQLite file (WAL, \`synchronous=FULL\`), \`POST /v1/pets\` at each connection count, the rounds interleaving the two.`,
    table(
      [
        "connections",
        "memory creates/s",
        "SQLite creates/s",
        "SQLite ÷ memory creates/s",
        "memory CPU µs/create",
        "SQLite CPU µs/create",
        "kernel share of CPU, memory / SQLite",
      ],
      connections.map((count) => {
        const memoryRuns = select(report.creates, memory, "create", count)
        const sqliteRuns = select(report.creates, sqlite, "create", count)
        return [
          String(count),
          show(spread(memoryRuns.map(throughput)), 0),
          show(spread(sqliteRuns.map(throughput)), 0),
          show(spread(roundRatios(sqliteRuns, memoryRuns, throughput)), 2, "×"),
          show(spread(memoryRuns.map(cpu)), 1),
          show(spread(sqliteRuns.map(cpu)), 1),
          `${percent(memoryRuns)} / ${percent(sqliteRuns)}`,
        ]
      }),
    ),
    statusLines(results, sections.durable),
  )
}

const listScaleBlock = (report: Report, results: ReadonlyArray<TargetResult>) => {
  const { listScale } = report
  if (listScale === undefined) return undefined
  return paragraphs(
    `\`${report.command}\`, its last phase, runs \`list-scale.ts --requests 1000\`: each store seeded in bulk by one SQL statement, served by the real app in that process, one client sending one request at a time.`,
    listScale.ok
      ? listScale.output
      : ["list-scale.ts failed:", "", "```", listScale.output, "```"].join("\n"),
    statusLines(results, sections.scale),
  )
}

const memoryBlock = (report: Report, results: ReadonlyArray<TargetResult>): string => {
  const { rss, settings } = report
  const warmup = rss.collectedDuringWarmup
    ? `The mix first ran ${format(rss.warmupSeconds, 0)} s: until the server's second full garbage collection (read from its \`/metrics\`), then 10 s more.`
    : `**The warm-up (${format(rss.warmupSeconds, 0)} s) ended before the server's second full garbage collection**, so growth may be the heap finding its size rather than a leak.`
  return paragraphs(
    `\`${report.command}\`, its memory phase. RSS of the service (memory) over a ${rss.seconds} s mixed run (the three reads, a 404, two 400s and a 401 in turn on each of ${settings["connections"]} connections; no creates, so the store does not grow), sampled every second: start ${mib(rss.startKiB)}, end ${mib(rss.endKiB)}, max ${mib(rss.maxKiB)}; ${format(rss.requestsPerSecond, 0)} req/s, ${format(rss.cpuMicrosPerRequest, 1)} µs CPU/request. ${warmup} Full collections during the measured run: ${rss.fullCollections}.`,
    statusLines(results, sections.memory),
    "Resident memory per stored pet: RSS after the creates minus RSS before them, over their count (both after 1,000 creates of warm-up and a quiet second; garbage not yet collected counts, so read it as an upper bound):",
    table(
      ["target", "pets created", "RSS before", "RSS after", "bytes per pet", "creates/s"],
      report.memoryPerPet.map((entry) => [
        entry.target,
        format(entry.pets, 0),
        mib(entry.beforeKiB),
        mib(entry.afterKiB),
        format(entry.bytesPerPet, 0),
        format(entry.createsPerSecond, 0),
      ]),
    ),
  )
}

const operationsBlock = (report: Report): string =>
  paragraphs(
    `\`${report.command}\`, its logs-and-limits phase: the same build beside itself with \`PETSTORE_LOG_LEVEL=info\` (one JSON access line per request, to a pipe) and \`PETSTORE_RATE_LIMIT=1000000/s\` (every request counted, none refused), the buckets in the process's memory and, with \`PETSTORE_REDIS_URL\`, in the machine's Redis (one \`EVALSHA\` per request; Redis's own CPU is not counted). The rounds interleave them.`,
    costTable(report.operations, report.scenarios),
  )

const admissionBlock = (report: Report): string | undefined =>
  report.admission === undefined
    ? undefined
    : paragraphs(
        `\`${report.command}\`, its admission-control phase: the same build with \`PETSTORE_OVERLOAD_TARGET=off\` beside the service as it ships (admission control on), at 32 connections, far below capacity: nothing is refused, and what differs is the bookkeeping of every request's decision. The rounds interleave them.`,
        costTable(report.admission, report.scenarios),
      )

const tracingBlock = (report: Report): string | undefined => {
  const { tracing } = report
  if (tracing === undefined) return undefined
  const before =
    tracing.before.length === 0
      ? ""
      : ` Beside them, other builds (\`BENCH_BEFORE\`): ${tracing.before.map((build) => `"${build.target}" (\`${build.main}\` of ${build.path})`).join(", ")}.`
  return paragraphs(
    `\`${report.command}\`, its tracing phase: the service with tracing off (no \`OTEL_\` variable) beside the same build with \`OTEL_EXPORTER_OTLP_ENDPOINT\` set to a local OTLP receiver that answers every export and keeps nothing, and \`OTEL_TRACES_SAMPLER=always_on\`: every request traced and exported (http/protobuf, the SDK's batch processor).${before} The rounds interleave them. The receiver took ${format(tracing.exports, 0)} exports (${mib(tracing.exportedBytes / 1024)}).`,
    costTable(tracing.runs, report.scenarios),
  )
}

/** Every generated block of RESULTS.md, from one report. */
export const renderBlocks = (report: Report): Blocks => {
  const results = targetResults(report)
  return {
    run: runBlock(report),
    targets: targetsBlock(report),
    comparison: comparisonBlock(report, results),
    "lone-creates": loneCreatesBlock(report, results),
    layers: layersBlock(report),
    "durable-creates": durableCreatesBlock(report, results),
    "list-scale": listScaleBlock(report, results),
    memory: memoryBlock(report, results),
    operations: operationsBlock(report),
    admission: admissionBlock(report),
    tracing: tracingBlock(report),
  }
}

/** The blocks as one Markdown text, in order (for the console and quick runs). */
export const blocksText = (blocks: Blocks): string =>
  blockNames
    .flatMap((name) => {
      const text = blocks[name]
      return text === undefined ? [] : [`<!-- ${name} -->\n\n${text}`]
    })
    .join("\n\n")

/**
 * For the console: the service's CPU per request against the previous results file, and each
 * target whose status changed since, whose reading in RESULTS.md is then to be rewritten.
 */
export const comparison = (report: Report, previousJson: string): string | undefined => {
  const previous = Option.getRight(decodeReport(previousJson))
  if (Option.isNone(previous)) return undefined
  const service = serviceOf(report)
  const lines = [`\nservice CPU µs/request, this run against the previous one:`]
  for (const scenario of report.scenarios) {
    const before = median(
      select(previous.value.runs, service, scenario.id).map((run) => run.cpuMicrosPerRequest),
    )
    const now = median(select(report.runs, service, scenario.id).map(cpu))
    lines.push(
      `  ${scenario.title}: ${format(now, 1)} (was ${format(before, 1)}, ${format(now / before, 2)}×)`,
    )
  }
  const was = new Map(targetResults(previous.value).map((result) => [result.target, result.status]))
  for (const result of targetResults(report)) {
    const status = was.get(result.target)
    if (status !== undefined && status !== result.status)
      lines.push(
        `  target "${result.target}": ${status} before, ${result.status} now; rewrite its reading in RESULTS.md`,
      )
  }
  return lines.join("\n")
}
