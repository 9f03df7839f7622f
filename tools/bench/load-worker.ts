/**
 * The load generator, one process for the whole benchmark (http-bench.ts starts it under
 * `taskset -c 1`), so no measured run pays for starting Node, tsx and autocannon. For each
 * `{"plan":…}` line on stdin: an autocannon warm-up, then `{"event":"ready"}` on stdout; on a
 * `go` line, the measured run, then `{"event":"done",…}` with the counts. It exits when stdin
 * closes. The runner reads the server's CPU time between `go` and `done`.
 *
 *   node --import tsx load-worker.ts
 */
import { createInterface } from "node:readline"
import autocannon from "autocannon"
import { Schema } from "effect"
import { WorkerCommand, type LoadCounts, type LoadPlan } from "./load-plan.js"

const run = async (
  plan: LoadPlan,
  options: { seconds: number; amount?: number },
): Promise<LoadCounts> => {
  const result = await autocannon({
    url: plan.origin,
    connections: plan.connections,
    duration: options.seconds,
    ...(options.amount === undefined ? {} : { amount: options.amount }),
    timeout: 10,
    requests: plan.requests.map((request) => ({
      method: request.method,
      path: request.path,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    })),
  })
  return {
    responses: result["1xx"] + result["2xx"] + result["3xx"] + result["4xx"] + result["5xx"],
    ok: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    duration: result.duration,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0]),
    ),
  }
}

const say = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`)
const command = Schema.decodeUnknownSync(Schema.parseJson(WorkerCommand))

let planned: LoadPlan | undefined
for await (const line of createInterface({ input: process.stdin })) {
  const next = command(line)
  if (next !== "go") {
    planned = next.plan
    if (planned.warmupSeconds > 0) await run(planned, { seconds: planned.warmupSeconds })
    say({ event: "ready" })
  } else if (planned !== undefined) {
    const { seconds, amount } = planned
    say({
      event: "done",
      counts: await run(planned, amount === undefined ? { seconds } : { seconds: 0, amount }),
    })
    planned = undefined
  }
}
