/** The figures http-bench.ts gathers, and the Markdown it writes into RESULTS.md. */
import { Either, Schema } from "effect"
import type { Mismatch } from "./http-bench-checks.js"
import type { Machine } from "./http-bench-environment.js"
import type { DurableCreateLayer, LoneCreatesRound } from "./lone-creates.js"
import { table } from "./statistics.js"

/** One measured run of one scenario on one target. */
export interface Run {
  readonly target: string
  readonly scenario: string
  readonly round: number
  readonly connections: number
  readonly requests: number
  readonly requestsPerSecond: number
  /** Server CPU time (user + system, every thread) over the run, per response. */
  readonly cpuMicrosPerRequest: number
  /** Server CPU time over wall time: near 1 when the server, not the load, was the limit. */
  readonly serverCpuShare: number
  /** The part of the server's CPU time spent in the kernel (system time). */
  readonly kernelShare: number
  readonly latencyP50: number
  readonly latencyP99: number
}

export interface Report {
  readonly date: string
  readonly command: string
  readonly mode: string
  readonly settings: Readonly<Record<string, number | boolean>>
  readonly machine: Machine
  readonly versions: Readonly<Record<string, string>>
  readonly service: { readonly description: string; readonly warnings: ReadonlyArray<string> }
  readonly scenarios: ReadonlyArray<{ readonly id: string; readonly title: string }>
  readonly targets: ReadonlyArray<string>
  readonly runs: ReadonlyArray<Run>
  readonly mismatches: ReadonlyArray<Mismatch>
  /** The service as benchmarked beside one with its access log and rate limits on. */
  readonly operations: ReadonlyArray<Run>
  /** The service beside itself with every request traced (and, if given, another build). */
  readonly tracing?:
    | {
        readonly runs: ReadonlyArray<Run>
        /** Exports the local OTLP receiver took, and their bytes. */
        readonly exports: number
        readonly exportedBytes: number
        /** Other builds run beside it (`BENCH_BEFORE`). */
        readonly before: ReadonlyArray<{
          readonly target: string
          readonly path: string
          readonly main: string
        }>
      }
    | undefined
  readonly creates: ReadonlyArray<Run>
  /** Durable creates at one connection beside better-sqlite3 alone (absent from older reports). */
  readonly loneCreates?: ReadonlyArray<LoneCreatesRound> | undefined
  /** The layers under a durable create, measured in one process (absent from older reports). */
  readonly durableCreateLayers?: ReadonlyArray<DurableCreateLayer> | undefined
  readonly rss: {
    readonly seconds: number
    /** The mix ran this long before the measured run… */
    readonly warmupSeconds: number
    /** …and the server made two full collections meanwhile (else the warm-up hit its limit). */
    readonly collectedDuringWarmup: boolean
    /** Full collections during the measured run. */
    readonly fullCollections: number
    readonly requests: number
    readonly requestsPerSecond: number
    readonly cpuMicrosPerRequest: number
    readonly startKiB: number
    readonly endKiB: number
    readonly maxKiB: number
    readonly samplesKiB: ReadonlyArray<number>
  }
  readonly memoryPerPet: ReadonlyArray<{
    readonly target: string
    readonly pets: number
    readonly beforeKiB: number
    readonly afterKiB: number
    readonly bytesPerPet: number
    readonly createsPerSecond: number
  }>
  readonly listScale: { readonly ok: boolean; readonly output: string } | undefined
  readonly minutes: number
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >>> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2
}

interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
}

const spread = (values: ReadonlyArray<number>): Spread => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
})

const format = (value: number, digits: number) =>
  value.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** "12,345 (12,001–12,890)", or just the median when there was one round. */
const show = (values: Spread, digits: number, unit = "") =>
  values.min === values.max
    ? `${format(values.median, digits)}${unit}`
    : `${format(values.median, digits)}${unit} (${format(values.min, digits)}–${format(values.max, digits)})`

const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`

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

/** What the RSS run's warm-up reached, and how often the heap was fully collected while measured. */
const fullCollectionsNote = (rss: Report["rss"]): string => {
  const warmup = rss.collectedDuringWarmup
    ? `The mix first ran ${format(rss.warmupSeconds, 0)} s: until the server's second full garbage collection (read from its \`/metrics\`), then 10 s more, since until then the heap grows toward its working size whatever the code does.`
    : `**The warm-up (${format(rss.warmupSeconds, 0)} s) ended before the server's second full garbage collection**, so the growth may be the heap finding its size rather than a leak.`
  return `${warmup} Full collections during the measured run: ${rss.fullCollections}.`
}

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

export const renderReport = (report: Report, previousJson?: string): string => {
  const { settings } = report
  const lines: Array<string> = []
  const [service = "service", ...baselines] = report.targets
  lines.push(
    "## HTTP: the service beside hand-written baselines (`http-bench.ts`)",
    "",
    `Written by \`${report.command}\` on ${report.date.slice(0, 16).replace("T", " ")} UTC (${format(report.minutes, 1)} minutes).`,
    `Machine: ${report.machine.nproc} CPUs (${report.machine.cpuModel}), ${report.machine.memoryGiB} GiB, Linux ${report.machine.kernel}; Node ${report.machine.node}.`,
    `Packages: ${Object.entries(report.versions)
      .map(([name, version]) => `${name} ${version}`)
      .join(", ")}.`,
    `The service: ${report.service.description}, \`PETSTORE_STORAGE=memory\`, \`PETSTORE_LOG_LEVEL=warn\`, \`PETSTORE_RATE_LIMIT=off\`. The baselines (\`tools/bench/baselines/\`, run through tsx) keep the same data structure and answer the same API.`,
    "",
    `Each server runs pinned to core 0 (\`taskset -c 0\`), seeded with ${format(Number(settings["seedPets"]), 0)} pets through \`POST /v1/pets\`; autocannon runs in a process pinned to core 1 with ${settings["connections"]} connections, ${settings["warmup"]} s of warm-up before each ${settings["seconds"]} s measured run (at most 1 s from the second round, every server being warm by then); ${settings["rounds"]} round(s), the targets interleaved in each (${report.targets.join(", ")}). CPU per request is the server process's utime + stime (\`/proc/<pid>/stat\`) over the measured run divided by the responses; "server CPU" is that time over the run's wall time (near 100 %: the server was the bottleneck). Figures are medians over the rounds, (min–max) beside them.`,
    "",
  )
  for (const warning of report.service.warnings) lines.push(`> **Warning:** ${warning}.`, "")

  const rows: Array<Array<string>> = []
  for (const scenario of report.scenarios) {
    for (const target of report.targets) {
      const runs = select(report.runs, target, scenario.id)
      if (runs.length === 0) continue
      rows.push([
        scenario.title,
        target,
        show(spread(runs.map(throughput)), 0),
        show(spread(runs.map(cpu)), 1),
        `${format(median(runs.map((run) => run.serverCpuShare * 100)), 0)} %`,
        `${format(median(runs.map((run) => run.latencyP99)), 1)} ms`,
      ])
    }
  }
  lines.push(
    table(["scenario", "target", "req/s", "CPU µs/request", "server CPU", "p99 latency"], rows),
    "",
  )

  const unsaturated = [...report.runs, ...report.creates].filter(
    (run) => run.connections >= 32 && run.serverCpuShare < 0.9,
  )
  if (unsaturated.length > 0)
    lines.push(
      `> **Note:** in ${unsaturated.length} run(s) at ${settings["connections"]} connections the server used less than 90 % of its core, so something else limited it (another process on the machine, or the load generator): ${unsaturated
        .map(
          (run) =>
            `${run.target} ${run.scenario} round ${run.round} (${format(run.serverCpuShare * 100, 0)} %)`,
        )
        .join(
          ", ",
        )}. Their req/s are low; CPU per request is less affected, but prefer a quiet machine.`,
      "",
    )

  lines.push(
    "The service's CPU per request over each baseline's (median of the per-round ratios, min–max); below 1.00× the service is cheaper:",
    "",
  )
  lines.push(
    table(
      ["scenario", ...baselines.map((baseline) => `service ÷ ${baseline}`)],
      report.scenarios.map((scenario) => [
        scenario.title,
        ...baselines.map((baseline) => {
          const ratios = roundRatios(
            select(report.runs, service, scenario.id),
            select(report.runs, baseline, scenario.id),
            cpu,
          )
          return ratios.length === 0 ? "–" : show(spread(ratios), 2, "×")
        }),
      ]),
    ),
    "",
  )

  if (report.mismatches.length > 0) {
    lines.push(
      `Where the baselines' answers differ from the service's (${report.mismatches.length} of the probes in \`http-bench-checks.ts\`; none is a measured request):`,
      "",
    )
    for (const mismatch of report.mismatches)
      lines.push(`- ${mismatch.target}, \`${mismatch.request}\`: ${mismatch.difference}`)
    lines.push("")
  } else
    lines.push(
      "Every baseline answered the probes of `http-bench-checks.ts` as the service did.",
      "",
    )

  lines.push(
    "### What the access log and the rate limiter cost",
    "",
    `Every comparison above runs the service with \`PETSTORE_LOG_LEVEL=warn\` and \`PETSTORE_RATE_LIMIT=off\`, as the baselines neither log nor limit. Here the same build runs beside itself with \`PETSTORE_LOG_LEVEL=info\` (one JSON access line per request, written to a pipe) and \`PETSTORE_RATE_LIMIT=1000000/s\` (every request counted, none refused), with the buckets in the process's memory and, with \`PETSTORE_REDIS_URL\`, in the machine's Redis (one \`EVALSHA\` per request); the rounds interleave them. Redis's own CPU is not counted: the server's is.`,
    "",
    costTable(report.operations, report.scenarios),
    "",
  )

  if (report.tracing !== undefined) {
    const { tracing } = report
    lines.push(
      "### What tracing costs",
      "",
      `The service as above (tracing off: no \`OTEL_\` variable) beside the same build with \`OTEL_EXPORTER_OTLP_ENDPOINT\` set to a local OTLP receiver in the benchmark's process, which answers every export and keeps nothing, and \`OTEL_TRACES_SAMPLER=always_on\`: every request traced and exported (http/protobuf, the SDK's batch processor).${tracing.before.length === 0 ? "" : ` Beside them, other builds (\`BENCH_BEFORE\`): ${tracing.before.map((build) => `"${build.target}" (\`${build.main}\` of ${build.path})`).join(", ")}, the service before the changes being measured.`} The rounds interleave them. The receiver took ${format(tracing.exports, 0)} exports (${mib(tracing.exportedBytes / 1024)}).`,
      "",
      costTable(tracing.runs, report.scenarios),
      "",
    )
  }

  const createTargets = [...new Set(report.creates.map((run) => run.target))]
  const [memory = "", sqlite = ""] = createTargets
  const connections = [...new Set(report.creates.map((run) => run.connections))]
  lines.push(
    "### Durable creates: `POST /v1/pets` on an SQLite file against memory",
    "",
    "The same build, a fresh server for each store (SQLite: WAL, `synchronous=FULL`, a file in the temporary directory), seeded as above; the rounds interleave the two.",
    "",
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
    "",
  )

  const lone = report.loneCreates ?? []
  if (lone.length > 0) {
    const ratio = (round: LoneCreatesRound) =>
      round.serviceLatencyMicros.p50 / round.rawLatencyMicros.p50
    const floorRatio = (round: LoneCreatesRound) =>
      (round.floorLatencyMicros.p50 + round.rawLatencyMicros.p50) / round.rawLatencyMicros.p50
    lines.push(
      "### Durable creates at one connection",
      "",
      `Every create a batch of its own: a fresh server on an SQLite file (WAL, \`synchronous=FULL\`), seeded as above; a client pinned to core 1 sends ${format(lone[0]?.creates ?? 0, 0)} creates a round one after another over one kept-alive connection (as many before, in the first round, to warm up), timing each from its request to the end of its 201. Beside it, on the same file while the server is idle, better-sqlite3 alone pinned to core 0 inserts one pet and commits it (\`BEGIN IMMEDIATE\`, the service's \`INSERT … RETURNING\`, \`COMMIT\`) as many times. Targets: at most 300 µs of server CPU per create; p50 within 1.5× better-sqlite3's.`,
      "",
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
            `${format(median(lone.map((round) => round.serviceLatencyMicros.p50)), 0)} / ${format(median(lone.map((round) => round.serviceLatencyMicros.p99)), 0)}`,
            `${format(median(lone.map((round) => round.rawLatencyMicros.p50)), 0)} / ${format(median(lone.map((round) => round.rawLatencyMicros.p99)), 0)}`,
            show(spread(lone.map((round) => round.rawCpuMicrosPerCommit)), 0),
            show(spread(lone.map(ratio)), 2, "×"),
          ],
        ],
      ),
      "",
      "The floor under those targets: the node:http baseline's create (memory, nothing to commit) timed by the same client in the same rounds, and that round trip added to better-sqlite3's commit, as a service on Node's `http` with a storage stack that cost nothing would answer.",
      "",
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
            `${format(median(lone.map((round) => round.floorLatencyMicros.p50)), 0)} / ${format(median(lone.map((round) => round.floorLatencyMicros.p99)), 0)}`,
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
      "",
    )
  }

  const layers = report.durableCreateLayers ?? []
  if (layers.length > 0) {
    const added = (index: number) =>
      median(layers[index]?.cpuMicros ?? []) - median(layers[index - 1]?.cpuMicros ?? [])
    const signed = (value: number) => `${value < 0 ? "−" : "+"}${format(Math.abs(value), 1)}`
    lines.push(
      "### The layers under a durable create",
      "",
      "Where a lone durable create's CPU goes below HTTP: one process pinned to core 0, a fresh SQLite file (WAL, `synchronous=FULL`, the service's schema), creates one after another at each layer of the stack, the layers interleaved round by round (durable-create-layers.ts). `driver`: better-sqlite3 running the service's `INSERT … RETURNING`, which SQLite makes its own transaction, as it does the service's batch without keys. `connection`: the same through @effect/sql's connection, held reserved (its prepared-statement cache and driver call, in a fiber). `statement`: through the `SqlClient` as the repository runs it, span off (a connection acquired and released per statement). `repository`: `PetRepository.create`, the group commit included. `use case`: `createPet`, as the HTTP handler runs it. The service's CPU per create at one connection, above, less the use case's, is what serving it adds: HTTP, and one request per event-loop turn.",
      "",
      table(
        ["layer", "CPU µs/create", "over the layer below"],
        layers.map((layer, index) => [
          layer.name,
          show(spread(layer.cpuMicros), 1),
          index === 0 ? "" : signed(added(index)),
        ]),
      ),
      "",
    )
  }

  const { rss } = report
  lines.push(
    "### Memory",
    "",
    `RSS of the service (memory) over a ${rss.seconds} s mixed run (the three reads, a 404, two 400s and a 401 in turn on each of ${settings["connections"]} connections; no creates, so the store does not grow), sampled every second: start ${mib(rss.startKiB)}, end ${mib(rss.endKiB)}, max ${mib(rss.maxKiB)} (end − start ${mib(rss.endKiB - rss.startKiB)}); ${format(rss.requestsPerSecond, 0)} req/s, ${format(rss.cpuMicrosPerRequest, 1)} µs CPU/request. ${fullCollectionsNote(rss)}`,
    "",
    "Resident memory per stored pet: RSS after the creates minus RSS before them, over their count (both taken after 1,000 creates of warm-up and a quiet second; garbage not yet collected counts, so read it as an upper bound):",
    "",
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
    "",
  )

  lines.push(
    "### Listing at 1,000 and 1,000,000 pets (`list-scale.ts`, run by `http-bench.ts`)",
    "",
  )
  if (report.listScale === undefined)
    lines.push(
      "Not run (quick mode or `BENCH_LIST_SCALE=0`); see the section above for its last figures.",
    )
  else if (!report.listScale.ok)
    lines.push("list-scale.ts failed:", "", "```", report.listScale.output, "```")
  else lines.push(report.listScale.output)
  lines.push("")

  const previous = previousJson === undefined ? undefined : comparison(report, previousJson)
  if (previous !== undefined) process.stderr.write(`${previous}\n`)
  return lines.join("\n")
}

const PreviousRuns = Schema.parseJson(
  Schema.Struct({
    date: Schema.String,
    runs: Schema.Array(
      Schema.Struct({
        target: Schema.String,
        scenario: Schema.String,
        cpuMicrosPerRequest: Schema.Number,
      }),
    ),
  }),
)

/** The service's CPU per request against the previous results file, for the console. */
const comparison = (report: Report, previousJson: string): string | undefined => {
  const previous = Schema.decodeUnknownEither(PreviousRuns)(previousJson)
  if (Either.isLeft(previous)) return undefined
  const [service = "service"] = report.targets
  const lines = [
    `\nservice CPU µs/request, this run against the previous (${previous.right.date}):`,
  ]
  for (const scenario of report.scenarios) {
    const before = median(
      previous.right.runs
        .filter((run) => run.target === service && run.scenario === scenario.id)
        .map((run) => run.cpuMicrosPerRequest),
    )
    const now = median(select(report.runs, service, scenario.id).map(cpu))
    lines.push(
      `  ${scenario.title}: ${format(now, 1)} (was ${format(before, 1)}, ${format(now / before, 2)}×)`,
    )
  }
  return lines.join("\n")
}
