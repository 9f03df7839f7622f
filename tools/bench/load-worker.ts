/**
 * One load run, in a process of its own (http-bench.ts starts it under `taskset -c 1`): an
 * autocannon warm-up, then `{"event":"ready"}` on stdout; on a `go` line on stdin, the measured
 * run, then `{"event":"done",…}` with the counts, and exit. The runner reads the server's CPU
 * time between `go` and `done`.
 *
 *   node --import tsx load-worker.ts '<LoadPlan as JSON>'
 */
import { createInterface } from "node:readline"
import autocannon from "autocannon"
import { Schema } from "effect"
import { LoadPlan, type LoadCounts } from "./load-plan.js"

const plan = Schema.decodeUnknownSync(Schema.parseJson(LoadPlan))(process.argv[2] ?? "")

const run = async (options: { seconds: number; amount?: number }): Promise<LoadCounts> => {
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
  }
}

if (plan.warmupSeconds > 0) await run({ seconds: plan.warmupSeconds })
process.stdout.write(`${JSON.stringify({ event: "ready" })}\n`)
const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  if (line.trim() !== "go") continue
  const counts = await run(
    plan.amount === undefined ? { seconds: plan.seconds } : { seconds: 0, amount: plan.amount },
  )
  process.stdout.write(`${JSON.stringify({ event: "done", counts })}\n`)
  break
}
lines.close()
process.exit(0)
