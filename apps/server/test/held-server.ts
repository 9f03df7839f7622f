import assert from "node:assert/strict"
import { setTimeout as sleep } from "node:timers/promises"
import { cpuQuota, cpuQuotaUnavailable } from "@petstore/test-support/cpu-quota"
import {
  longestProbeGapMs,
  openLoopProcess,
  type ProbeOutcome,
} from "@petstore/test-support/open-loop"
import { cpuSeconds } from "@petstore/test-support/process-cpu"
import { sampleValue, scrape, type Sample } from "@petstore/test-support/prometheus-text"
import { postJson } from "@petstore/test-support/requests"
import { processApiKey, startServerProcess } from "./server-process.js"

/**
 * A server process held to a fifth of a core by a cgroup CPU quota (as a container's CPU limit
 * holds it), for the tests that overload it from another process. Without the quota they cannot
 * make the overload: they are skipped, except in CI (`CI=true`, run as root), where they fail
 * saying why.
 */

const unavailable = cpuQuotaUnavailable()
export const heldServerSkip =
  unavailable === undefined || process.env["CI"] === "true" ? false : unavailable

/**
 * A page of 100 pets whose names are 250 emoji (1 KB of UTF-8 each): 54 KB, several times what a
 * refusal costs to answer. A page of short names cost 54 µs on a fast core, not much more than
 * any answer costs in Node (a pre-built 503: 30 µs on a slower core), and no admission control in
 * the process keeps up with twice the load of requests that cheap: refusing them takes the quota
 * as serving them does.
 */
const listPath = "/v1/pets?limit=100"
const petName = (index: number) => `${index} ${"\u{1F415}".repeat(250)}`
/** The share of one core the server is held to. */
const quotaCores = 0.2

const warmRequests = 2_000
/** How long each open-loop run sends requests. */
export const loadSeconds = 5

/**
 * A memory server with 100 pets, warm, held to a fifth of a core, with admission control as it is
 * by default unless `env` says otherwise. `capacity` is the lists a second the quota serves,
 * measured on the host's core; `load(rate)` sends lists at `rate` for `loadSeconds`, open-loop,
 * to the server or through the balancer at `through`, and asks the server's `/healthz` meanwhile.
 */
export const startHeldServer = async (env: Record<string, string> = {}) => {
  assert.equal(unavailable, undefined, `cannot hold the server to a CPU quota: ${unavailable}`)
  const server = await startServerProcess({
    storage: "memory",
    env: { PETSTORE_LOG_LEVEL: "warn", PETSTORE_RATE_LIMIT: "off", ...env },
  })
  const quota = cpuQuota("petstore-test-overload", quotaCores)
  assert.ok(typeof quota !== "string", `cannot hold the server to a CPU quota: ${quota}`)
  for (let index = 0; index < 100; index += 1) {
    const created = await server.api("/pets", postJson({ name: petName(index), categoryId: 1 }))
    assert.equal(created.status, 201)
  }
  const list = async (origin = server.origin) => {
    const response = await fetch(`${origin}${listPath}`, {
      headers: { Authorization: `Bearer ${processApiKey}` },
    })
    await response.arrayBuffer()
    return response.status
  }
  // Warm, as a running server is: one still compiling its hot paths on the same quota serves
  // less, and would rightly refuse what it will serve once warm. The last half, warm, measures
  // what a list costs on this host's core.
  const pid = server.child.pid ?? 0
  let warmCpuSeconds = 0
  for (let index = 0; index < warmRequests; index += 1) {
    if (index === warmRequests / 2) warmCpuSeconds = cpuSeconds(pid)
    assert.equal(await list(), 200)
  }
  const listCpuSeconds = (cpuSeconds(pid) - warmCpuSeconds) / (warmRequests / 2)
  // Served one at a time, a list costs more than in a loaded loop's turns: this is below what
  // the quota serves under load, on whatever core the host gives.
  const capacity = quotaCores / listCpuSeconds
  const before = await scrape(server.origin)
  quota.add(pid)
  const load = (rate: number, through = server.origin) =>
    openLoopProcess({
      origin: through,
      path: listPath,
      headers: { Authorization: `Bearer ${processApiKey}` },
      rate,
      seconds: loadSeconds,
      deadlineMs: 2_000,
      connections: 256,
      probe: { path: "/healthz", everyMs: 100, origin: server.origin },
    })
  const stop = async () => {
    quota.remove()
    await server.stop()
  }
  return { server, before, capacity, list, load, stop }
}

type HeldServer = Awaited<ReturnType<typeof startHeldServer>>

/** Rates tried, each twice the last, before the test gives up overloading the server. */
const overloadAttempts = 3
/** An overload episode ends one to two seconds after its last refusal; each begins with a line. */
const episodeEndsMs = 2_500

/**
 * One open-loop run at `rate` (through the balancer at `through`, if given), with what the server
 * said and counted meanwhile. It overloaded the server when more than a tenth was refused;
 * whether or not it did, every request was answered.
 */
const overloadRun = async (held: HeldServer, rate: number, through?: string) => {
  const { server, load } = held
  const before = await scrape(server.origin)
  const logsFrom = server.stderr().length
  const { outcomes, probes } = await load(rate, through)
  const answers = outcomes.flatMap((outcome) =>
    outcome.kind === "answered" ? [outcome.answer] : [],
  )
  const unanswered = outcomes.length - answers.length
  assert.equal(
    unanswered,
    0,
    `${unanswered} of ${outcomes.length} got no answer within 2 s at ${rate}/s`,
  )
  const served = answers.filter((answer) => answer.status === 200).length
  const refusals = answers.filter((answer) => answer.status === 503)
  assert.equal(served + refusals.length, answers.length)
  return {
    overloaded: refusals.length > answers.length / 10,
    rate,
    answers,
    served,
    refusals,
    probes,
    before,
    logs: server.stderr().slice(logsFrom),
  }
}

/**
 * Lists at about twice what the server serves, until more than a tenth is refused: `capacity`
 * is measured below it (0.7 of it here: a list served alone costs more than in a loaded loop's
 * turns). A rate that leaves it refusing little is doubled: a fixed rate was twice capacity on
 * one host's core and 1.1 times on a faster one. Whatever the rate, nothing times out.
 */
export const overload = async (held: HeldServer, through?: string) => {
  let run = await overloadRun(held, Math.round(3 * held.capacity), through)
  for (let attempt = 1; !run.overloaded && attempt < overloadAttempts; attempt += 1) {
    await sleep(episodeEndsMs)
    run = await overloadRun(held, run.rate * 2, through)
  }
  assert.ok(
    run.overloaded,
    `${run.refusals.length} of ${run.answers.length} refused at ${run.rate}/s, the most tried (capacity ${Math.round(held.capacity)}/s measured)`,
  )
  return run
}

/** What the server counted between two scrapes: the lists it served, the requests it refused. */
export const countedBetween = (before: ReadonlyArray<Sample>, after: ReadonlyArray<Sample>) => {
  const between = (name: string, labels?: Record<string, string>) =>
    (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0)
  return {
    listed: between("petstore_http_request_duration_seconds_count", {
      operation: "listPets",
      status: "200",
    }),
    refused: between("petstore_overload_refused_total"),
  }
}

/**
 * `/healthz`, asked again 100 ms after each answer throughout a run, answered 200 within 1 s
 * each time: answering within 1 s each, it is asked throughout.
 */
export const assertHealthAnswered = (probes: ReadonlyArray<ProbeOutcome>) => {
  const gapMs = longestProbeGapMs(probes, loadSeconds)
  assert.ok(gapMs < 1_200, `no /healthz probe for ${Math.round(gapMs)} ms`)
  const slow = probes.filter((probe) => probe.status !== 200 || probe.latencyMs >= 1_000)
  assert.deepEqual(slow, [], "/healthz must answer 200 within 1 s under overload")
}
