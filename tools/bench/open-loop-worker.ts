/**
 * The open-loop load generator of overload.ts, one process pinned to its core. Requests are sent
 * at scheduled times (`rate` a second, evenly spaced), whatever the server does: a request is
 * never held back because an earlier one has not been answered (a closed loop, one request per
 * connection after the last answer, cannot overload a server). Each is given up `deadlineMs`
 * after its scheduled time, as a user stops waiting: its connection is closed, and it counts as
 * timed out. Latencies run from the scheduled time, so a worker that falls behind adds its own
 * lag to them rather than hiding it. Connections come from a `node:http` agent with keep-alive, a
 * new one opened whenever every open one is busy (up to `maxSockets`).
 *
 * For each `{"plan":…}` line on stdin: `{"event":"measuring"}` when the first measured request
 * is sent, `{"event":"measured"}` once the last is, then `{"event":"done","counts":…}`. It exits
 * when stdin closes.
 *
 *   node --import tsx open-loop-worker.ts
 */
import { Agent, request, type ClientRequest, type IncomingMessage } from "node:http"
import { createInterface } from "node:readline"
import { Schema } from "effect"
import {
  latencies,
  OpenLoopCommand,
  type OpenLoopCounts,
  type OpenLoopPlan,
} from "./open-loop-plan.js"

const say = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`)

/** The most connections opened at once before a run: a listen backlog's worth (Node's is 511). */
const preopenWave = 256

interface Pending {
  readonly scheduledAt: number
  readonly measured: boolean
  outgoing: ClientRequest | undefined
  settled: boolean
}

const run = (plan: OpenLoopPlan): Promise<OpenLoopCounts> =>
  new Promise((resolve) => {
    const agent = new Agent({
      keepAlive: true,
      maxSockets: plan.maxSockets,
      maxFreeSockets: plan.maxSockets,
      // Each kept connection in turn, as a balancer spreads requests over its pool: none sits idle
      // long enough for a server's keep-alive timeout to close it (Node's 5 s, Koa as operated).
      scheduling: "fifo",
    })
    let connectionsOpened = 0
    const createConnection = agent.createConnection.bind(agent)
    agent.createConnection = (...args) => {
      connectionsOpened++
      return createConnection(...args)
    }
    const origin = new URL(plan.origin)
    const intervalMs = 1000 / plan.rate
    const warmupCount = Math.round(plan.warmupSeconds * plan.rate)
    const total = warmupCount + Math.round(plan.seconds * plan.rate)
    let startAt = Number.POSITIVE_INFINITY

    const served: Array<number> = []
    const refusedEachSecond: Array<number> = Array.from(
      { length: Math.ceil(plan.seconds) },
      () => 0,
    )
    /** When the first measured request is scheduled. */
    let measuredFrom = 0
    const refused: Array<number> = []
    const sendLags: Array<number> = []
    let otherStatus = 0
    let timedOut = 0
    let failed = 0
    let refusalSample: string | undefined
    let cpuAtStart: NodeJS.CpuUsage | undefined
    let measuringStartedAt = 0
    let workerCpuShare = 0

    /** Requests not yet settled, in scheduled order (so in deadline order). */
    const inFlight: Array<Pending> = []
    let inFlightHead = 0
    let sent = 0
    let settledCount = 0

    const settle = (pending: Pending, record: () => void) => {
      if (pending.settled) return
      pending.settled = true
      settledCount++
      if (pending.measured) record()
      if (settledCount === total) finish()
    }

    const send = (index: number, scheduledAt: number) => {
      const measured = index >= warmupCount
      const spec = plan.requests[index % plan.requests.length] ?? plan.requests[0]
      const pending: Pending = { scheduledAt, measured, outgoing: undefined, settled: false }
      inFlight.push(pending)
      if (measured) sendLags.push(performance.now() - scheduledAt)
      const headers: Record<string, string | number> = { ...spec.headers, Host: origin.host }
      if (spec.body !== undefined) headers["Content-Length"] = Buffer.byteLength(spec.body)
      const outgoing = request(
        {
          agent,
          host: origin.hostname,
          port: origin.port,
          method: spec.method,
          path: spec.path,
          headers,
        },
        (response) => {
          const status = response.statusCode ?? 0
          const chunks: Array<Buffer> = []
          const sample = status === 503 && refusalSample === undefined && measured
          if (sample) response.on("data", (chunk: Buffer) => chunks.push(chunk))
          else response.resume()
          response.on("end", () =>
            settle(pending, () => {
              const latency = performance.now() - scheduledAt
              if (status >= 200 && status < 300) served.push(latency)
              else if (status === 503) {
                refused.push(latency)
                const second = Math.floor((scheduledAt - measuredFrom) / 1000)
                refusedEachSecond[second] = (refusedEachSecond[second] ?? 0) + 1
              } else otherStatus++
              if (sample && refusalSample === undefined) {
                const head = Object.entries(response.headers)
                  .map(([name, value]) => `${name}: ${String(value)}`)
                  .join("\n")
                refusalSample = `${status} ${response.statusMessage ?? ""}\n${head}\n\n${Buffer.concat(chunks).toString()}`
              }
            }),
          )
          response.on("error", () => settle(pending, () => failed++))
        },
      )
      pending.outgoing = outgoing
      outgoing.on("error", () => settle(pending, () => failed++))
      outgoing.end(spec.body)
    }

    /** Gives up the requests past their deadline: the user stopped waiting. */
    const expire = (now: number) => {
      while (inFlightHead < inFlight.length) {
        const pending = inFlight[inFlightHead]
        if (pending === undefined) break
        if (!pending.settled) {
          if (now < pending.scheduledAt + plan.deadlineMs) break
          settle(pending, () => timedOut++)
          pending.outgoing?.destroy()
        }
        inFlightHead++
      }
      // Drop what is behind the head now and then, so the list does not grow for the whole run.
      if (inFlightHead > 10_000) {
        inFlight.splice(0, inFlightHead)
        inFlightHead = 0
      }
    }

    const tick = () => {
      const now = performance.now()
      while (sent < total) {
        const scheduledAt = startAt + sent * intervalMs
        if (scheduledAt > now) break
        if (sent === warmupCount) {
          cpuAtStart = process.cpuUsage()
          measuringStartedAt = performance.now()
          say({ event: "measuring" })
        }
        send(sent, scheduledAt)
        sent++
        if (sent === total) {
          const cpu = process.cpuUsage(cpuAtStart)
          workerCpuShare = (cpu.user + cpu.system) / 1000 / (performance.now() - measuringStartedAt)
          say({ event: "measured" })
        }
      }
      expire(now)
    }
    let ticker: NodeJS.Timeout | undefined

    // The pool a balancer keeps to a server it has been sending to: connections opened and kept
    // before the load begins, so that its onset does not begin with a flood of new connections.
    // Each answer is held unread, its connection busy, until all are open, so that every request
    // needs a connection of its own; they are opened in waves no larger than a listen backlog, as
    // SYNs past a full one are dropped and sent again only after 1, 3, 7… s.
    const openOne = () =>
      new Promise<IncomingMessage | undefined>((answered) => {
        const outgoing = request(
          { agent, host: origin.hostname, port: origin.port, path: plan.openPath },
          answered,
        )
        outgoing.on("error", () => answered(undefined))
        outgoing.end()
      })
    const preopen = async () => {
      const held: Array<IncomingMessage> = []
      for (let started = 0; started < plan.preopen; started += preopenWave) {
        const wave = Math.min(preopenWave, plan.preopen - started)
        for (const response of await Promise.all(Array.from({ length: wave }, openOne)))
          if (response !== undefined) held.push(response)
      }
      await Promise.all(
        held.map(
          (response) =>
            new Promise<void>((done) => {
              response.on("end", done)
              response.on("error", () => done())
              response.resume()
            }),
        ),
      )
    }
    if (total === 0) return finish()
    void preopen().then(() => {
      startAt = performance.now() + 50
      measuredFrom = startAt + warmupCount * intervalMs
      ticker = setInterval(tick, 1)
    })

    function finish() {
      clearInterval(ticker)
      agent.destroy()
      const lags = latencies(sendLags)
      resolve({
        scheduled: total - warmupCount,
        served: latencies(served),
        refused: latencies(refused),
        refusedEachSecond,
        otherStatus,
        timedOut,
        failed,
        ...(refusalSample === undefined ? {} : { refusalSample }),
        sendLagP99: lags.p99,
        sendLagMax: lags.max,
        workerCpuShare,
        connectionsOpened,
      })
    }
  })

const command = Schema.decodeUnknownSync(Schema.parseJson(OpenLoopCommand))
for await (const line of createInterface({ input: process.stdin })) {
  const { plan } = command(line)
  say({ event: "done", counts: await run(plan) })
}
