/**
 * The service beside four hand-written baselines (Koa 3 + @koa/router bare and as operated with
 * request ids, security headers, constant-time keys, a histogram and an access line; Fastify 5;
 * plain node:http) doing the same work: each server pinned to core 0, autocannon in a worker pinned
 * to core 1, 32 connections, a warm-up before every measured run, targets interleaved round
 * after round; req/s and the server's CPU time per request from /proc. Then the service alone:
 * creates on an SQLite file against memory, creates at one connection beside better-sqlite3
 * alone and the layers under one (durable-create-layers.ts), RSS over a mixed run, resident
 * memory per stored pet, and list-scale.ts.
 *
 * A full run writes results/http-bench.json and the generated blocks of RESULTS.md (between its
 * `http-bench` markers; see results-markdown.ts), and says on the console which target's status
 * changed since the previous results. A quick run is for development: one short round, no
 * list-scale; it prints its blocks and writes results/http-bench-quick.json (ignored by git),
 * leaving RESULTS.md and results/http-bench.json to the full run's figures.
 *
 *   npm run bench -w @petstore/bench                    # about 15 minutes
 *   BENCH_QUICK=1 npm run bench -w @petstore/bench      # under 3 minutes
 *
 * Settings (environment): BENCH_ROUNDS, BENCH_SECONDS (measured), BENCH_WARMUP (seconds),
 * BENCH_CONNECTIONS, BENCH_RSS_SECONDS, BENCH_RSS_WARMUP_LIMIT, BENCH_MEMORY_PETS, BENCH_LIST_SCALE (1 or 0),
 * BENCH_LONE_CREATES (creates per round at one connection),
 * BENCH_SERVICE (dist or src: the built apps/server/dist/main.js, or the sources through tsx),
 * BENCH_BEFORE (other checkouts, built, separated by `:`, whose services run beside this one
 * in the tracing phase: the cost of a change, measured in one run).
 */
import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { seedPet } from "./baselines/pet-store.js"
import type { LoadPlan, LoadRequest } from "./load-plan.js"
import {
  killChildren,
  residentKiB,
  startLoadWorker,
  startServer,
  type LoadResult,
  type LoadWorker,
  type Server,
  type ServerCommand,
} from "./processes.js"
import { checkResponse, conformance, type Mismatch } from "./http-bench-checks.js"
import { blocksText, comparison, renderBlocks, type Report, type Run } from "./http-bench-report.js"
import {
  checkResultsMarkdown,
  formatted,
  resultsJson,
  resultsMarkdown,
  writeBlocks,
} from "./results-markdown.js"
import {
  beforeBuilds,
  environment,
  repoRoot,
  serviceBuild,
  versions,
} from "./http-bench-environment.js"
import { startOtlpSink } from "./otlp-sink.js"
import { durableCreateLayers, loneCreatesRound, type LoneCreatesRound } from "./lone-creates.js"
import { numberSetting, quick } from "./bench-settings.js"

const settings = {
  rounds: numberSetting("BENCH_ROUNDS", quick ? 1 : 3),
  seconds: numberSetting("BENCH_SECONDS", quick ? 2 : 4),
  warmup: numberSetting("BENCH_WARMUP", quick ? 1 : 2),
  connections: numberSetting("BENCH_CONNECTIONS", 32),
  rssSeconds: numberSetting("BENCH_RSS_SECONDS", quick ? 10 : 60),
  /** The longest the RSS run's warm-up waits for the server's first two full collections. */
  rssWarmupLimit: numberSetting("BENCH_RSS_WARMUP_LIMIT", quick ? 10 : 240),
  memoryPets: numberSetting("BENCH_MEMORY_PETS", quick ? 10_000 : 50_000),
  listScale: numberSetting("BENCH_LIST_SCALE", quick ? 0 : 1) === 1,
  /** Creates per round at one connection (and as many warm-up first). */
  loneCreates: numberSetting("BENCH_LONE_CREATES", quick ? 1000 : 3000),
  seedPets: 1000,
}
const serverCore = 0
const loadCore = 1
const deadlineMinutes = numberSetting("BENCH_DEADLINE_MINUTES", quick ? 8 : 30)

const benchDir = fileURLToPath(new URL(".", import.meta.url))
const apiKey = "bench-key-0123456789"
const authorization = { Authorization: `Bearer ${apiKey}` }
const json = { ...authorization, "Content-Type": "application/json" }

interface Scenario {
  readonly id: string
  readonly title: string
  readonly request: LoadRequest
  readonly expectedStatus: number
}

/** The pet the get scenario asks for (seeded, so present on every target). */
const knownId = 500

const scenarios: ReadonlyArray<Scenario> = [
  {
    id: "list20",
    title: "GET /v1/pets?limit=20",
    request: { method: "GET", path: "/v1/pets?limit=20", headers: authorization },
    expectedStatus: 200,
  },
  {
    id: "listSold100",
    title: "GET /v1/pets?status=sold&limit=100",
    request: { method: "GET", path: "/v1/pets?status=sold&limit=100", headers: authorization },
    expectedStatus: 200,
  },
  {
    id: "get",
    title: `GET /v1/pets/${knownId}`,
    request: { method: "GET", path: `/v1/pets/${knownId}`, headers: authorization },
    expectedStatus: 200,
  },
  {
    id: "create",
    title: "POST /v1/pets (memory)",
    request: {
      method: "POST",
      path: "/v1/pets",
      headers: json,
      body: JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
    },
    expectedStatus: 201,
  },
]
const createScenario = scenarios[3]

const serviceEnv = (storage: string) => ({
  PETSTORE_STORAGE: storage,
  PETSTORE_API_KEYS: apiKey,
  PETSTORE_LOG_LEVEL: "warn",
  PETSTORE_RATE_LIMIT: "off",
  // The RSS run sends a 401 on every connection in turn; throttled, it would become a 429.
  PETSTORE_AUTH_FAILURE_LIMIT: "off",
  PORT: "0",
  HOST: "127.0.0.1",
})

const build = serviceBuild()

const serviceCommand = (name: string, storage: string): ServerCommand => ({
  name,
  args: build.args,
  cwd: repoRoot,
  env: serviceEnv(storage),
})

/**
 * The service as an operator runs it: an access-log line per request (to a pipe this process
 * reads) and every key's requests counted by the rate limiter, whose limit is set high enough
 * never to refuse the load, so what is measured is the bookkeeping.
 */
const benchRedisUrl = process.env["BENCH_REDIS_URL"] ?? "redis://127.0.0.1:6379"

const operatedService: ServerCommand = {
  ...serviceCommand("service, logs + limits", "memory"),
  env: { ...serviceEnv("memory"), PETSTORE_LOG_LEVEL: "info", PETSTORE_RATE_LIMIT: "1000000/s" },
}

/** The same, with the rate limiter's buckets in the machine's Redis (`PETSTORE_REDIS_URL`). */
const operatedWithRedis: ServerCommand = {
  ...operatedService,
  name: "service, logs + limits in Redis",
  env: { ...operatedService.env, PETSTORE_REDIS_URL: benchRedisUrl },
}

const baseline = (name: string, file: string): ServerCommand => ({
  name,
  args: ["--import", "tsx", path.join(benchDir, "baselines", file)],
  cwd: benchDir,
  // `warn`, as the service is run: the operated Koa baseline logs as it does.
  env: { PETSTORE_API_KEYS: apiKey, PETSTORE_LOG_LEVEL: "warn", PORT: "0", HOST: "127.0.0.1" },
})

const targets: ReadonlyArray<ServerCommand> = [
  serviceCommand("service", "memory"),
  baseline("koa", "koa.ts"),
  baseline("koa, operated", "koa-operated.ts"),
  baseline("fastify", "fastify.ts"),
  baseline("node:http", "node-http.ts"),
]

const benchStarted = Date.now()
/** A progress line, after the minutes and seconds since the run started. */
const log = (message: string) => {
  const seconds = Math.round((Date.now() - benchStarted) / 1000)
  const elapsed = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`
  process.stderr.write(`[${elapsed}] ${message}\n`)
}

/** POSTs pets 1..count one after another (so pet i gets id i everywhere), each checked for its 201. */
const seed = async (server: Server, count: number) => {
  for (let i = 1; i <= count; i++) {
    const response = await fetch(`${server.origin}/v1/pets`, {
      method: "POST",
      headers: json,
      body: JSON.stringify(seedPet(i)),
    })
    const text = await response.text()
    if (response.status !== 201)
      throw new Error(`${server.name}: seeding pet ${i} answered ${response.status} ${text}`)
  }
}

const plan = (
  server: Server,
  requests: LoadPlan["requests"],
  options: { connections?: number; warmup?: number; seconds?: number; amount?: number } = {},
): LoadPlan => ({
  origin: server.origin,
  requests,
  connections: options.connections ?? settings.connections,
  warmupSeconds: options.warmup ?? settings.warmup,
  seconds: options.seconds ?? settings.seconds,
  ...(options.amount === undefined ? {} : { amount: options.amount }),
})

/**
 * The warm-up before a measured run: `BENCH_WARMUP` in the first round; from the second, when
 * each server has been warmed and measured already, at most 1 s (which keeps the whole run
 * within its fifteen minutes).
 */
const warmupSeconds = (round: number) =>
  round === 1 ? settings.warmup : Math.min(settings.warmup, 1)

/** One measured run of one scenario; fails loudly on any unexpected answer. */
const measure = async (
  load: LoadWorker,
  server: Server,
  scenario: Scenario,
  round: number,
  connections = settings.connections,
): Promise<Run> => {
  const result: LoadResult = await load.run(
    plan(server, [scenario.request], { connections, warmup: warmupSeconds(round) }),
    server,
  )
  const { counts } = result
  if (counts.non2xx > 0 || counts.errors > 0 || counts.responses === 0)
    throw new Error(
      `${server.name}, ${scenario.title}: ${counts.responses} responses, ${counts.non2xx} not 2xx, ${counts.errors} errors (${counts.timeouts} timeouts)\n${server.logTail()}`,
    )
  const run: Run = {
    target: server.name,
    scenario: scenario.id,
    round,
    connections,
    requests: counts.responses,
    requestsPerSecond: counts.responses / counts.duration,
    cpuMicrosPerRequest: (result.cpuSeconds * 1e6) / counts.responses,
    serverCpuShare: result.cpuSeconds / result.wallSeconds,
    kernelShare: result.systemSeconds / result.cpuSeconds,
    latencyP50: counts.latencyP50,
    latencyP99: counts.latencyP99,
  }
  log(
    `  ${server.name.padEnd(9)} ${scenario.id.padEnd(11)} c=${String(connections).padEnd(2)} ${Math.round(run.requestsPerSecond).toString().padStart(6)} req/s ${run.cpuMicrosPerRequest.toFixed(1).padStart(7)} µs CPU/req  server CPU ${(run.serverCpuShare * 100).toFixed(0)}% (kernel ${(run.kernelShare * 100).toFixed(0)}%)`,
  )
  return run
}

const verifyScenarios = async (server: Server) => {
  for (const scenario of scenarios) {
    const problems = await checkResponse(server.origin, scenario, knownId)
    if (problems.length > 0)
      throw new Error(
        `${server.name} does not answer ${scenario.title} as expected:\n  ${problems.join("\n  ")}`,
      )
  }
}

const compareTargets = async (
  load: LoadWorker,
): Promise<{ runs: Array<Run>; mismatches: Array<Mismatch> }> => {
  const servers: Array<Server> = []
  try {
    for (const target of targets) {
      const server = await startServer(target, serverCore)
      servers.push(server)
      await seed(server, settings.seedPets)
      log(`${target.name}: listening at ${server.origin} (pid ${server.pid}), seeded`)
    }
    const [service, ...baselines] = servers
    if (service === undefined) throw new Error("no service")
    const mismatches = await conformance(service, baselines, apiKey)
    for (const mismatch of mismatches)
      log(`  semantics differ: ${mismatch.target}, ${mismatch.request}: ${mismatch.difference}`)
    for (const server of servers) await verifyScenarios(server)
    const runs: Array<Run> = []
    for (let round = 1; round <= settings.rounds; round++) {
      log(`round ${round} of ${settings.rounds}`)
      for (const scenario of scenarios) {
        for (const server of servers) runs.push(await measure(load, server, scenario, round))
      }
    }
    return { runs, mismatches }
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

/**
 * Scenarios and rounds of the logs-and-limits phase: the listing, the get and the create, two
 * rounds (a third round and the 100-pet listing cost three minutes and told nothing more),
 * which keeps the whole run within its fifteen minutes.
 */
const operationsScenarios = scenarios.filter((scenario) => scenario.id !== "listSold100")
const operationsRounds = Math.min(settings.rounds, 2)

/**
 * Servers started from `commands`, seeded and checked, then measured on the operations'
 * scenarios, the rounds interleaving them: what one build or setting costs beside another.
 */
const interleaved = async (
  load: LoadWorker,
  phase: string,
  commands: ReadonlyArray<ServerCommand>,
): Promise<Array<Run>> => {
  const servers: Array<Server> = []
  try {
    for (const command of commands) {
      const server = await startServer(command, serverCore)
      servers.push(server)
      await seed(server, settings.seedPets)
      await verifyScenarios(server)
    }
    const runs: Array<Run> = []
    for (let round = 1; round <= operationsRounds; round++) {
      log(`${phase}, round ${round} of ${operationsRounds}`)
      for (const scenario of operationsScenarios) {
        for (const server of servers) runs.push(await measure(load, server, scenario, round))
      }
    }
    return runs
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

/** The service with and without its logs and rate limits (in memory, in Redis), interleaved. */
const operationsCost = (load: LoadWorker): Promise<Array<Run>> =>
  interleaved(load, "logs and limits", [
    serviceCommand("service", "memory"),
    operatedService,
    operatedWithRedis,
  ])

/**
 * The service with admission control off (`PETSTORE_OVERLOAD_TARGET=off`) beside it on, as it
 * ships, interleaved: what deciding every request costs below capacity, where nothing is refused.
 */
const admissionCost = (load: LoadWorker): Promise<Array<Run>> =>
  interleaved(load, "admission control", [
    {
      ...serviceCommand("service, admission control off", "memory"),
      env: { ...serviceEnv("memory"), PETSTORE_OVERLOAD_TARGET: "off" },
    },
    serviceCommand("service", "memory"),
  ])

const before = beforeBuilds()

/**
 * The service with tracing off, the same build tracing every request to a local OTLP receiver,
 * and (with `BENCH_BEFORE`) the builds before the change, interleaved.
 */
const tracingCost = async (load: LoadWorker): Promise<NonNullable<Report["tracing"]>> => {
  const sink = await startOtlpSink()
  const traced: ServerCommand = {
    ...serviceCommand("service, traced", "memory"),
    env: {
      ...serviceEnv("memory"),
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.endpoint,
      OTEL_TRACES_SAMPLER: "always_on",
    },
  }
  const beforeTargets = before.map((build) => ({
    ...serviceCommand(`service at ${build.commit}`, "memory"),
    args: [build.main],
    cwd: build.path,
  }))
  try {
    const runs = await interleaved(load, "tracing", [
      serviceCommand("service", "memory"),
      traced,
      ...beforeTargets,
    ])
    return {
      runs,
      exports: sink.exports(),
      exportedBytes: sink.bytes(),
      before: before.map((build, index) => ({
        target: beforeTargets[index]?.name ?? build.commit,
        path: build.path,
        main: path.relative(build.path, build.main),
      })),
    }
  } finally {
    await sink.close()
  }
}

const createConnections = [1, 8, 32]

/** POST on a fresh SQLite file against memory, the same build, at 1, 8 and 32 connections. */
const durableCreates = async (load: LoadWorker, directory: string): Promise<Array<Run>> => {
  if (createScenario === undefined) throw new Error("no create scenario")
  const stores = [
    { label: "service, memory", storage: "memory" },
    { label: "service, SQLite", storage: `file:${path.join(directory, "bench.db")}` },
  ]
  const servers: Array<Server> = []
  try {
    for (const store of stores) {
      const server = await startServer(serviceCommand(store.label, store.storage), serverCore)
      servers.push(server)
      await seed(server, settings.seedPets)
      await verifyScenarios(server)
    }
    const runs: Array<Run> = []
    for (let round = 1; round <= settings.rounds; round++) {
      log(`creates, round ${round} of ${settings.rounds}`)
      for (const connections of createConnections) {
        for (const server of servers)
          runs.push(await measure(load, server, createScenario, round, connections))
      }
    }
    return runs
  } finally {
    await Promise.all(servers.map((server) => server.stop()))
  }
}

/**
 * Durable creates at one connection (each a batch of one) on a fresh SQLite file, beside
 * better-sqlite3 alone committing one insert at a time on that file and the node:http
 * baseline's create; see lone-creates.ts.
 */
const loneCreates = async (directory: string): Promise<Array<LoneCreatesRound>> => {
  const filename = path.join(directory, "lone.db")
  const server = await startServer(
    serviceCommand("service, SQLite", `file:${filename}`),
    serverCore,
  )
  const floor = await startServer(baseline("node:http", "node-http.ts"), serverCore)
  try {
    await seed(server, settings.seedPets)
    await verifyScenarios(server)
    await seed(floor, settings.seedPets)
    const rounds: Array<LoneCreatesRound> = []
    for (let round = 1; round <= settings.rounds; round++) {
      const result = await loneCreatesRound({
        server,
        floor,
        apiKey,
        filename,
        warmup: round === 1 ? settings.loneCreates : Math.round(settings.loneCreates / 3),
        creates: settings.loneCreates,
        serverCore,
        clientCore: loadCore,
      })
      log(
        `  lone creates, round ${round}: service ${result.serviceCpuMicrosPerCreate.toFixed(0)} µs CPU/create, p50 ${result.serviceLatencyMicros.p50.toFixed(0)} µs; better-sqlite3 alone p50 ${result.rawLatencyMicros.p50.toFixed(0)} µs, ${result.rawCpuMicrosPerCommit.toFixed(0)} µs CPU/commit; node:http p50 ${result.floorLatencyMicros.p50.toFixed(0)} µs`,
      )
      rounds.push(result)
    }
    return rounds
  } finally {
    await Promise.all([server.stop(), floor.stop()])
  }
}

/** Full (mark-compact) garbage collections the server has made, from its own `/metrics`. */
const fullCollections = async (server: Server): Promise<number> => {
  const text = await (await fetch(`${server.origin}/metrics`)).text()
  if (!text.includes("# TYPE nodejs_gc_duration_seconds histogram"))
    throw new Error(`${server.name}: /metrics does not count garbage collections`)
  // The series of a kind appears with its first collection.
  const count = /^nodejs_gc_duration_seconds_count\{kind="major"\} ([0-9]+)$/m.exec(text)?.[1]
  return Number(count ?? 0)
}

/**
 * RSS of the service (memory) under a mix of every read and the refusals (400, 401, 404),
 * sampled every second for `rssSeconds`. No creates: a store that grows is not a leak (the
 * memory per pet is measured apart).
 *
 * Until the heap has found its size, RSS climbs whatever the code does: V8 grows the old
 * generation with every surviving young object until its first full collection (0.1 to
 * 0.3 MiB/s here, for a minute or two), which often shrinks the heap, and it grows back to its
 * working size until the next. Measured then, a leak and a heap finding its size look alike.
 * So the mix first runs until the server reports two full collections (its `/metrics`), then
 * 10 s more, and only then is measured; the full collections during the measured run are
 * reported beside it.
 */
const rssOverTime = async (load: LoadWorker) => {
  const server = await startServer(serviceCommand("service", "memory"), serverCore)
  try {
    await seed(server, settings.seedPets)
    const mix: LoadPlan["requests"] = [
      { method: "GET", path: "/v1/pets/999999", headers: authorization },
      ...scenarios.filter((scenario) => scenario.request.method === "GET").map((s) => s.request),
      { method: "GET", path: "/v1/pets?limit=0", headers: authorization },
      { method: "GET", path: "/v1/pets", headers: {} },
      { method: "POST", path: "/v1/pets", headers: json, body: '{"name":"","categoryId":1}' },
    ]
    const checked = (result: LoadResult) => {
      if (result.counts.errors > 0 || result.counts.ok === 0 || result.counts.non2xx === 0)
        throw new Error(`mixed run: unexpected answers ${JSON.stringify(result.counts)}`)
      return result
    }
    const collectionsBefore = await fullCollections(server)
    const warmupStarted = performance.now()
    const warmedFor = () => (performance.now() - warmupStarted) / 1000
    const collectedSince = async () => (await fullCollections(server)) - collectionsBefore
    while ((await collectedSince()) < 2 && warmedFor() < settings.rssWarmupLimit)
      checked(await load.run(plan(server, mix, { warmup: 0, seconds: 10 }), server))
    const collected = (await collectedSince()) >= 2
    checked(await load.run(plan(server, mix, { warmup: 0, seconds: quick ? 2 : 10 }), server))
    const warmupSeconds = warmedFor()
    log(
      `  warmed ${warmupSeconds.toFixed(0)} s (${await collectedSince()} full collections); measuring ${settings.rssSeconds} s`,
    )
    const collectionsAtStart = await fullCollections(server)
    const samples: Array<number> = []
    const result = checked(
      await load.run(plan(server, mix, { warmup: 0, seconds: settings.rssSeconds }), server, () =>
        samples.push(residentKiB(server.pid)),
      ),
    )
    samples.push(residentKiB(server.pid))
    const first = samples[0] ?? Number.NaN
    const last = samples[samples.length - 1] ?? Number.NaN
    return {
      seconds: settings.rssSeconds,
      warmupSeconds,
      collectedDuringWarmup: collected,
      fullCollections: (await fullCollections(server)) - collectionsAtStart,
      requests: result.counts.responses,
      requestsPerSecond: result.counts.responses / result.counts.duration,
      cpuMicrosPerRequest: (result.cpuSeconds * 1e6) / result.counts.responses,
      startKiB: first,
      endKiB: last,
      maxKiB: Math.max(...samples),
      samplesKiB: samples,
    }
  } finally {
    await server.stop()
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resident memory per stored pet: RSS after `memoryPets` creates minus RSS before them, over
 * the count. Both sides are taken after 1,000 creates of warm-up and a second of quiet.
 */
const memoryPerPet = async (load: LoadWorker, command: ServerCommand) => {
  if (createScenario === undefined) throw new Error("no create scenario")
  const server = await startServer(command, serverCore)
  try {
    await seed(server, 1000)
    await pause(1000)
    const before = residentKiB(server.pid)
    const result = await load.run(
      plan(server, [createScenario.request], { warmup: 0, amount: settings.memoryPets }),
      server,
    )
    if (result.counts.ok !== settings.memoryPets)
      throw new Error(`${command.name}: ${result.counts.ok} of ${settings.memoryPets} creates`)
    await pause(2000)
    const after = residentKiB(server.pid)
    return {
      target: command.name,
      pets: settings.memoryPets,
      beforeKiB: before,
      afterKiB: after,
      bytesPerPet: ((after - before) * 1024) / settings.memoryPets,
      createsPerSecond: result.counts.ok / result.counts.duration,
    }
  } finally {
    await server.stop()
  }
}

const listScale = async () => {
  log("list-scale.ts (SQLite and PostgreSQL, 1,000 and 1,000,000 pets)")
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", path.join(benchDir, "list-scale.ts"), "--requests", "1000"],
      { cwd: benchDir, timeout: 8 * 60_000, maxBuffer: 16 * 1024 * 1024 },
    )
    return { ok: true, output: stdout.trim() }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    log(`list-scale.ts failed: ${message}`)
    return { ok: false, output: message.split("\n").slice(0, 12).join("\n") }
  }
}

/** Two cores and taskset, or a clear refusal. */
const checkMachine = () => {
  try {
    execFileSync("taskset", ["-c", `${serverCore},${loadCore}`, "true"])
  } catch (error) {
    throw new Error(
      `http-bench pins the server to core ${serverCore} and the load to core ${loadCore}; \`taskset -c ${serverCore},${loadCore} true\` failed (is util-linux installed, are there two cores?): ${error instanceof Error ? error.message : String(error)}`,
    )
  }
}

const main = async () => {
  checkMachine()
  if (!quick) checkResultsMarkdown()
  const started = Date.now()
  const watchdog = setTimeout(() => {
    log(`http-bench: still running after ${deadlineMinutes} minutes; stopping`)
    killChildren()
    process.exit(1)
  }, deadlineMinutes * 60_000)
  log(
    `http-bench: ${quick ? "quick" : "full"} mode, ${settings.rounds} round(s) of ${settings.warmup} s warm-up + ${settings.seconds} s, ${settings.connections} connections; service from ${build.description}`,
  )
  for (const warning of build.warnings) log(`  warning: ${warning}`)
  const directory = mkdtempSync(path.join(tmpdir(), "petstore-http-bench-"))
  const load = startLoadWorker(loadCore)
  try {
    const { runs, mismatches } = await compareTargets(load)
    const operationsRuns = await operationsCost(load)
    const admissionRuns = await admissionCost(load)
    const tracing = await tracingCost(load)
    const createRuns = await durableCreates(load, directory)
    log("durable creates at one connection, beside better-sqlite3 alone")
    const lone = await loneCreates(directory)
    log("the layers under a durable create, in one process")
    const layers = await durableCreateLayers({
      directory,
      rounds: settings.rounds,
      creates: settings.loneCreates,
      core: serverCore,
    })
    log("RSS over a mixed run")
    const rss = await rssOverTime(load)
    log("resident memory per stored pet")
    const perPet = [
      await memoryPerPet(load, serviceCommand("service", "memory")),
      await memoryPerPet(load, baseline("node:http", "node-http.ts")),
    ]
    const scale = settings.listScale ? await listScale() : undefined
    const report: Report = {
      date: new Date().toISOString(),
      command: quick
        ? "BENCH_QUICK=1 npm run bench -w @petstore/bench"
        : "npm run bench -w @petstore/bench",
      mode: quick ? "quick" : "full",
      settings,
      machine: environment(),
      versions: versions(),
      service: { description: build.description, warnings: build.warnings },
      scenarios: scenarios.map(({ id, title }) => ({ id, title })),
      targets: targets.map((target) => target.name),
      runs,
      mismatches,
      operations: operationsRuns,
      admission: admissionRuns,
      tracing,
      creates: createRuns,
      loneCreates: lone,
      durableCreateLayers: layers,
      rss,
      memoryPerPet: perPet,
      listScale: scale,
      minutes: (Date.now() - started) / 60_000,
    }
    await writeResults(report)
  } finally {
    clearTimeout(watchdog)
    await load.stop()
    rmSync(directory, { recursive: true, force: true })
  }
}

/** Where this run's report goes: the full run's is the one RESULTS.md is written from. */
const reportFile = quick ? path.join(benchDir, "results", "http-bench-quick.json") : resultsJson

const writeResults = async (report: Report) => {
  // RESULTS.md is checked again before anything is written, so the run changes both files or none.
  if (!quick) checkResultsMarkdown()
  const previous = existsSync(reportFile) ? readFileSync(reportFile, "utf8") : undefined
  const blocks = renderBlocks(report)
  mkdirSync(path.dirname(reportFile), { recursive: true })
  writeFileSync(reportFile, await formatted(reportFile, JSON.stringify(report)))
  if (!quick) await writeBlocks(blocks)
  process.stdout.write(`${blocksText(blocks)}\n`)
  const changes = previous === undefined ? undefined : comparison(report, previous)
  if (changes !== undefined) process.stderr.write(`${changes}\n`)
  const written = quick
    ? path.relative(repoRoot, reportFile)
    : `${path.relative(repoRoot, resultsMarkdown)} and ${path.relative(repoRoot, reportFile)}`
  log(`\nwrote ${written} (${report.minutes.toFixed(1)} minutes)`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(
      `http-bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    )
    killChildren()
    process.exit(1)
  },
)
