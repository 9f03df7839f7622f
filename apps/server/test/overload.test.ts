import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { cpuQuota, cpuQuotaUnavailable } from "@petstore/test-support/cpu-quota"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import { longestProbeGapMs, openLoopProcess } from "@petstore/test-support/open-loop"
import { cpuSeconds } from "@petstore/test-support/process-cpu"
import { sampleValue, scrape } from "@petstore/test-support/prometheus-text"
import { postJson } from "@petstore/test-support/requests"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { processApiKey, processTestTimeout, startServerProcess } from "./server-process.js"

/**
 * Overload, on the real process with admission control as it is by default: held to a fifth of a
 * core by a cgroup CPU quota (as a container's CPU limit holds it), given open-loop load from
 * another process at about twice what it can serve, and at a third. (Far past twice, refusing
 * alone takes the whole quota: each costs about a sixth of a served page, so at six times
 * capacity nothing would be left to serve with.) Without the quota the test cannot make the
 * overload: it is skipped, except in CI (`CI=true`, run as root), where it fails saying why.
 */

const unavailable = cpuQuotaUnavailable()
const skip = unavailable === undefined || process.env["CI"] === "true" ? false : unavailable

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

/** A memory server with 100 pets, warm, held to a fifth of a core: what each case loads. */
const startHeldServer = async () => {
  assert.equal(unavailable, undefined, `cannot hold the server to a CPU quota: ${unavailable}`)
  // Admission control as it is by default.
  const server = await startServerProcess({
    storage: "memory",
    env: { PETSTORE_LOG_LEVEL: "warn", PETSTORE_RATE_LIMIT: "off" },
  })
  const quota = cpuQuota("petstore-test-overload", quotaCores)
  assert.ok(typeof quota !== "string", `cannot hold the server to a CPU quota: ${quota}`)
  for (let index = 0; index < 100; index += 1) {
    const created = await server.api("/pets", postJson({ name: petName(index), categoryId: 1 }))
    assert.equal(created.status, 201)
  }
  const list = async () => {
    const response = await server.request(listPath)
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
  const load = (rate: number) =>
    openLoopProcess({
      origin: server.origin,
      path: listPath,
      headers: { Authorization: `Bearer ${processApiKey}` },
      rate,
      seconds: loadSeconds,
      deadlineMs: 2_000,
      connections: 256,
      probe: { path: "/healthz", everyMs: 100 },
    })
  const stop = async () => {
    quota.remove()
    await server.stop()
  }
  return { server, before, capacity, list, load, stop }
}

const warmRequests = 2_000
const loadSeconds = 5
/** Rates tried, each twice the last, before the test gives up overloading the server. */
const overloadAttempts = 3
/** An overload episode ends one to two seconds after its last refusal; each begins with a line. */
const episodeEndsMs = 2_500

type HeldServer = Awaited<ReturnType<typeof startHeldServer>>

/**
 * One open-loop run at `rate`, with what the server said and counted meanwhile. It overloaded the
 * server when more than a tenth was refused; whether or not it did, every request was answered.
 */
const overloadRun = async (
  server: HeldServer["server"],
  load: HeldServer["load"],
  rate: number,
) => {
  const before = await scrape(server.origin)
  const logsFrom = server.stderr().length
  const { outcomes, probes } = await load(rate)
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
    answers,
    served,
    refusals,
    probes,
    before,
    logs: server.stderr().slice(logsFrom),
  }
}

describe("overload", { skip }, () => {
  it(
    "refuses with well-formed 503s instead of letting requests time out, keeps /healthz answering, never lets a refusal reach the app, and recovers by itself",
    { timeout: processTestTimeout },
    async () => {
      const { server, capacity, list, load, stop } = await startHeldServer()
      try {
        // About twice what it serves: `capacity` is measured below it (0.7 of it here: a list
        // served alone costs more than in a loaded loop's turns). A rate that leaves it refusing
        // little is doubled: a fixed rate was twice capacity on one host's core and 1.1 times on a
        // faster one. Whatever the rate, nothing times out.
        let rate = Math.round(3 * capacity)
        let run = await overloadRun(server, load, rate)
        for (let attempt = 1; !run.overloaded && attempt < overloadAttempts; attempt += 1) {
          await sleep(episodeEndsMs)
          rate *= 2
          run = await overloadRun(server, load, rate)
        }
        const { answers, served, refusals, probes, before, logs } = run
        assert.ok(
          run.overloaded,
          `${refusals.length} of ${answers.length} refused at ${rate}/s, the most tried (capacity ${Math.round(capacity)}/s measured)`,
        )
        assert.ok(served > 0)
        for (const refusal of refusals) {
          assertErrorAnswer(refusal, 503, "overloaded")
          assert.equal(refusal.headers["retry-after"], "1")
        }
        // Asked again 100 ms after each answer: answering within 1 s each, it is asked throughout.
        const gapMs = longestProbeGapMs(probes, loadSeconds)
        assert.ok(gapMs < 1_200, `no /healthz probe for ${Math.round(gapMs)} ms`)
        const slow = probes.filter((probe) => probe.status !== 200 || probe.latencyMs >= 1_000)
        assert.deepEqual(slow, [], "/healthz must answer 200 within 1 s under overload")

        // What the app saw: the served requests, not one refusal.
        const after = await scrape(server.origin)
        const listed = (samples: typeof after) =>
          sampleValue(samples, "petstore_http_request_duration_seconds_count", {
            operation: "listPets",
            status: "200",
          }) ?? 0
        assert.equal(listed(after) - listed(before), served)
        assert.equal(
          (sampleValue(after, "petstore_overload_refused_total") ?? 0) -
            (sampleValue(before, "petstore_overload_refused_total") ?? 0),
          refusals.length,
        )

        // One line for the episode (a warning: on stderr), not one per refusal.
        const overloadLines = logs
          .split("\n")
          .filter((line) => line.includes("overloaded"))
          .map(parseLogLine)
        assert.equal(overloadLines.length, 1, logs.slice(-2_000))
        assert.equal(overloadLines[0]?.["level"], "warn")

        // The load gone, it serves every request again by itself, the quota still on.
        await sleep(500)
        for (let index = 0; index < 20; index += 1) assert.equal(await list(), 200)
      } finally {
        await stop()
      }
    },
  )

  it(
    "refuses nothing below capacity, under the same quota",
    { timeout: processTestTimeout },
    async () => {
      const { server, before, capacity, load, stop } = await startHeldServer()
      try {
        // A third of the capacity measured, itself below what the quota serves: below capacity
        // even if the core slows to half its speed meanwhile (a virtual machine's, with busy
        // neighbours on its host: CI once saw refusals at half). The requests still come in
        // bursts that spend some periods' share, freezing the process for the rest of them (20
        // periods of 70 here), which is no queue.
        const { outcomes } = await load(Math.round(capacity / 3))
        const statuses = outcomes.map((outcome) =>
          outcome.kind === "answered" ? outcome.answer.status : outcome.kind,
        )
        assert.deepEqual(
          statuses.filter((status) => status !== 200),
          [],
          `${statuses.length} requests`,
        )
        const after = await scrape(server.origin)
        assert.equal(
          (sampleValue(after, "petstore_overload_refused_total") ?? 0) -
            (sampleValue(before, "petstore_overload_refused_total") ?? 0),
          0,
        )
      } finally {
        await stop()
      }
    },
  )
})
