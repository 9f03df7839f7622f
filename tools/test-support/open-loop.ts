import { spawn } from "node:child_process"
import { once } from "node:events"
import { Agent, request as httpRequest, type IncomingMessage } from "node:http"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import type { Answer } from "./requests.js"

const OpenLoopOptions = Schema.Struct({
  /** `http://127.0.0.1:<port>` */
  origin: Schema.String,
  path: Schema.String,
  method: Schema.optional(Schema.String),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  body: Schema.optional(Schema.String),
  /** Requests a second, each sent at its scheduled time whether or not earlier ones were answered. */
  rate: Schema.Number,
  seconds: Schema.Number,
  /** A request not answered this long after its scheduled time is given up (its connection closed). */
  deadlineMs: Schema.Number,
  /**
   * The most connections open at once, as a load balancer's pool to its servers; a request that
   * finds none free waits for one, its deadline running. New connections are the exception behind
   * a balancer, and Node accepts one a turn of its event loop: a client that opens one per request
   * under overload waits in the kernel's accept queue, where the server cannot refuse it.
   */
  connections: Schema.Int,
  /**
   * `GET <path>` every `everyMs` meanwhile, on a connection of its own (`/healthz`), to `origin`
   * if given (an instance behind the balancer the load goes through), else to the load's.
   */
  probe: Schema.optional(
    Schema.Struct({
      path: Schema.String,
      everyMs: Schema.Number,
      origin: Schema.optional(Schema.String),
    }),
  ),
})
export type OpenLoopOptions = typeof OpenLoopOptions.Type

const AnswerSchema = Schema.Struct({
  status: Schema.Number,
  headers: Schema.mutable(
    Schema.Record({
      key: Schema.String,
      value: Schema.Union(
        Schema.String,
        Schema.mutable(Schema.Array(Schema.String)),
        Schema.Undefined,
      ),
    }),
  ),
  body: Schema.String,
})

/** One request's outcome; its latency runs from its scheduled time. */
const Outcome = Schema.Union(
  Schema.Struct({
    kind: Schema.Literal("answered"),
    answer: AnswerSchema,
    latencyMs: Schema.Number,
  }),
  Schema.Struct({ kind: Schema.Literal("timed out") }),
  Schema.Struct({ kind: Schema.Literal("failed"), error: Schema.String }),
)
export type Outcome = typeof Outcome.Type

/**
 * A probe's answer: when it was sent (ms after the load began), its status (0 when it got none)
 * and how long it took.
 */
const ProbeOutcome = Schema.Struct({
  sentAtMs: Schema.Number,
  status: Schema.Number,
  latencyMs: Schema.Number,
})
export type ProbeOutcome = typeof ProbeOutcome.Type

/**
 * The longest stretch of the load's first `seconds` in which no probe was sent: a probe is sent
 * once the last one is answered, so an endpoint that keeps answering leaves no long stretch, while
 * the number of probes also depends on how much CPU the generator itself got.
 */
export const longestProbeGapMs = (probes: ReadonlyArray<ProbeOutcome>, seconds: number): number => {
  const sent = probes.map((probe) => probe.sentAtMs).filter((at) => at <= seconds * 1000)
  const edges = [0, ...sent.sort((a, b) => a - b), seconds * 1000]
  return Math.max(...edges.slice(1).map((at, index) => at - (edges[index] ?? 0)))
}

const OpenLoopResult = Schema.Struct({
  outcomes: Schema.Array(Outcome),
  probes: Schema.Array(ProbeOutcome),
})
export type OpenLoopResult = typeof OpenLoopResult.Type

export const decodeOptions = Schema.decodeUnknownSync(Schema.parseJson(OpenLoopOptions))
const decodeResult = Schema.decodeUnknownSync(Schema.parseJson(OpenLoopResult))

/** The whole of a response, handed over once read. */
const readAnswer = (response: IncomingMessage, onAnswer: (answer: Answer) => void) => {
  const chunks: Array<Buffer> = []
  response.on("data", (chunk: Buffer) => chunks.push(chunk))
  response.on("end", () =>
    onAnswer({
      status: response.statusCode ?? 0,
      headers: response.headers,
      body: Buffer.concat(chunks).toString("utf8"),
    }),
  )
}

/**
 * Open-loop load: `rate` requests a second for `seconds`, each sent at its scheduled time on a
 * free kept-alive connection or a new one, never waiting for an earlier answer (a closed loop,
 * one request per connection after the last answer, cannot overload a server), each given up
 * `deadlineMs` after its scheduled time. Resolves once every request is answered or given up.
 */
export const openLoop = async (options: OpenLoopOptions): Promise<OpenLoopResult> => {
  const target = targetOf(options.origin)
  const agent = new Agent({
    keepAlive: true,
    maxSockets: options.connections,
    maxFreeSockets: options.connections,
  })
  await openPool(target, agent, options.connections)
  return runSchedule(options, target, agent)
}

/**
 * Opens `count` kept-alive connections (a `GET /healthz` on each), as a load balancer's pool to
 * an instance is open before traffic comes: a connection opened under overload waits in the
 * kernel's accept queue, where the server cannot refuse what it carries.
 */
const openPool = (target: { host: string; port: number }, agent: Agent, count: number) =>
  Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((done) => {
          const outgoing = httpRequest({ ...target, path: "/healthz", agent }, (response) => {
            response.resume()
            response.on("end", done)
          })
          outgoing.on("error", () => done())
          outgoing.end()
        }),
    ),
  )

const targetOf = (origin: string) => {
  const url = new URL(origin)
  return { host: url.hostname, port: Number(url.port) }
}

const runSchedule = (
  options: OpenLoopOptions,
  target: { host: string; port: number },
  agent: Agent,
): Promise<OpenLoopResult> =>
  new Promise((resolve) => {
    const total = Math.round(options.rate * options.seconds)
    const outcomes = new Array<Outcome | undefined>(total)
    const probes: Array<ProbeOutcome> = []
    const startAt = performance.now()
    const scheduledAt = (index: number) => startAt + (index * 1000) / options.rate
    let sent = 0
    let settled = 0
    let probing = false

    const settle = (index: number, outcome: Outcome) => {
      if (outcomes[index] !== undefined) return
      outcomes[index] = outcome
      if (++settled === total) finish()
    }

    const send = (index: number) => {
      const scheduled = scheduledAt(index)
      const outgoing = httpRequest(
        {
          ...target,
          path: options.path,
          method: options.method ?? "GET",
          headers: options.headers,
          agent,
        },
        (response) => {
          readAnswer(response, (answer) =>
            settle(index, { kind: "answered", answer, latencyMs: performance.now() - scheduled }),
          )
          response.on("error", (error) => settle(index, { kind: "failed", error: error.message }))
        },
      )
      outgoing.on("error", (error) => settle(index, { kind: "failed", error: error.message }))
      const giveUp = setTimeout(
        () => {
          settle(index, { kind: "timed out" })
          outgoing.destroy()
        },
        Math.max(0, scheduled + options.deadlineMs - performance.now()),
      )
      outgoing.on("close", () => clearTimeout(giveUp))
      outgoing.end(options.body)
    }

    const ticker = setInterval(() => {
      const now = performance.now()
      while (sent < total && scheduledAt(sent) <= now) send(sent++)
      if (sent === total) clearInterval(ticker)
    }, 1)

    const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 })
    const probe = options.probe
    const probeTarget = probe?.origin === undefined ? target : targetOf(probe.origin)
    const prober =
      probe === undefined
        ? undefined
        : setInterval(() => {
            if (probing) return
            probing = true
            const started = performance.now()
            const done = (status: number) => {
              probing = false
              probes.push({
                sentAtMs: started - startAt,
                status,
                latencyMs: performance.now() - started,
              })
            }
            const outgoing = httpRequest(
              { ...probeTarget, path: probe.path, agent: probeAgent },
              (response) => readAnswer(response, (answer) => done(answer.status)),
            )
            outgoing.setTimeout(options.deadlineMs * 2, () => outgoing.destroy())
            outgoing.on("error", () => done(0))
            outgoing.end()
          }, probe.everyMs)

    function finish() {
      clearInterval(prober)
      agent.destroy()
      probeAgent.destroy()
      resolve({
        outcomes: outcomes.map((outcome): Outcome => outcome ?? { kind: "timed out" }),
        probes,
      })
    }
    if (total === 0) finish()
  })

const processScript = fileURLToPath(new URL("./open-loop-process.ts", import.meta.url))
const tsxLoader = import.meta.resolve("tsx")

/**
 * `openLoop` run by a process of its own, so that its sending is not held up by a server in the
 * caller's event loop (a server in the test's own process, under the load it generates).
 */
export const openLoopProcess = async (options: OpenLoopOptions): Promise<OpenLoopResult> => {
  const child = spawn(
    process.execPath,
    ["--import", tsxLoader, processScript, JSON.stringify(options)],
    { stdio: ["ignore", "pipe", "inherit"] },
  )
  const chunks: Array<Buffer> = []
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
  const [code] = await once(child, "exit")
  if (code !== 0) throw new Error(`the open-loop process exited with ${String(code)}`)
  return decodeResult(Buffer.concat(chunks).toString("utf8"))
}
