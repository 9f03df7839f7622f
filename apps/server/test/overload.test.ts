import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { cpuQuota, cpuQuotaUnavailable } from "@petstore/test-support/cpu-quota"
import { assertErrorAnswer } from "@petstore/test-support/error-body"
import { longestProbeGapMs, openLoopProcess } from "@petstore/test-support/open-loop"
import { sampleValue, scrape } from "@petstore/test-support/prometheus-text"
import { postJson } from "@petstore/test-support/requests"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { processApiKey, processTestTimeout, startServerProcess } from "./server-process.js"

/**
 * Overload, on the real process with admission control as it is by default: held to a fifth of a
 * core by a cgroup CPU quota (as a container's CPU limit holds it), given open-loop load from
 * another process at about twice what it can serve, and at half. (Far past twice, refusing alone
 * takes the whole quota: each costs about a tenth of a served page, so at ten times capacity
 * nothing would be left to serve with.) Without the quota the test cannot make the overload: it
 * is skipped, except in CI (`CI=true`, run as root), where it fails saying why.
 */

const unavailable = cpuQuotaUnavailable()
const skip = unavailable === undefined || process.env["CI"] === "true" ? false : unavailable

/** A page of 100 pets: a fifth of a core serves about 500 a second. */
const listPath = "/v1/pets?limit=100"

/** A memory server with 100 pets, warm, held to a fifth of a core: what each case loads. */
const startHeldServer = async () => {
  assert.equal(unavailable, undefined, `cannot hold the server to a CPU quota: ${unavailable}`)
  // Admission control as it is by default.
  const server = await startServerProcess({
    storage: "memory",
    env: { PETSTORE_LOG_LEVEL: "warn", PETSTORE_RATE_LIMIT: "off" },
  })
  const quota = cpuQuota("petstore-test-overload", 0.2)
  assert.ok(typeof quota !== "string", `cannot hold the server to a CPU quota: ${quota}`)
  for (let index = 0; index < 100; index += 1) {
    const created = await server.api("/pets", postJson({ name: `Pet ${index}`, categoryId: 1 }))
    assert.equal(created.status, 201)
  }
  const list = async () => {
    const response = await server.request(listPath)
    await response.arrayBuffer()
    return response.status
  }
  // Warm, as a running server is: one still compiling its hot paths on the same quota serves
  // less, and would rightly refuse what it will serve once warm.
  for (let index = 0; index < warmRequests; index += 1) assert.equal(await list(), 200)
  const before = await scrape(server.origin)
  quota.add(server.child.pid ?? 0)
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
  return { server, before, list, load, stop }
}

const warmRequests = 1_000
const loadSeconds = 5

describe("overload", { skip }, () => {
  it(
    "refuses with well-formed 503s instead of letting requests time out, keeps /healthz answering, never lets a refusal reach the app, and recovers by itself",
    { timeout: processTestTimeout },
    async () => {
      const { server, before, list, load, stop } = await startHeldServer()
      try {
        const { outcomes, probes } = await load(1_000)
        const answers = outcomes.flatMap((outcome) =>
          outcome.kind === "answered" ? [outcome.answer] : [],
        )
        const unanswered = outcomes.length - answers.length
        assert.equal(unanswered, 0, `${unanswered} of ${outcomes.length} got no answer within 2 s`)
        const served = answers.filter((answer) => answer.status === 200).length
        const refusals = answers.filter((answer) => answer.status === 503)
        assert.equal(served + refusals.length, answers.length)
        assert.ok(refusals.length > answers.length / 10, `${refusals.length} refused`)
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
        const overloadLines = server
          .stderr()
          .split("\n")
          .filter((line) => line.includes("overloaded"))
          .map(parseLogLine)
        assert.equal(overloadLines.length, 1, server.stderr().slice(-2_000))
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
      const { server, before, load, stop } = await startHeldServer()
      try {
        // A third of what a fifth of a core serves, below capacity even on a core running at
        // half its speed (a virtual machine's, with busy neighbours on its host: CI once saw
        // refusals at half): the requests still come in bursts that spend some periods' share,
        // freezing the process for the rest of them (20 periods of 70 here), which is no queue.
        const { outcomes } = await load(150)
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
