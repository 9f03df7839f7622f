/**
 * A health probe asked from the bench's own process, not the load generator's: a generator that
 * falls behind its schedule would add its own event loop's lag to every probe it times, and the
 * figure would measure the generator. `GET <path>` on one kept-alive connection every `everyMs`,
 * as a kubelet or a balancer asks; one at a time, each given up after 5 s.
 */
import { Agent, request } from "node:http"
import { latencies, type Latencies } from "./open-loop-plan.js"

export interface ProbeResult {
  /** The probes answered 200, in ms from the moment each was sent. */
  readonly answered: Latencies
  /** Probes answered with another status, or not at all within 5 s. */
  readonly failures: number
  /** How long the probe still unanswered when the window closed had waited, in ms; 0 if none. */
  readonly waitingAtEndMs: number
}

const giveUpMs = 5_000

export interface HealthProbe {
  /** Stops asking; what was answered while it asked. */
  readonly stop: () => ProbeResult
}

export const startHealthProbe = (origin: string, path: string, everyMs: number): HealthProbe => {
  const url = new URL(origin)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const times: Array<number> = []
  let failures = 0
  let probing = false
  let sentAt = 0
  const probe = () => {
    if (probing) return
    probing = true
    sentAt = performance.now()
    const outgoing = request({ agent, host: url.hostname, port: url.port, path }, (response) => {
      response.resume()
      response.on("end", () => {
        probing = false
        if (response.statusCode === 200) times.push(performance.now() - sentAt)
        else failures++
      })
    })
    outgoing.setTimeout(giveUpMs, () => outgoing.destroy())
    outgoing.on("error", () => {
      probing = false
      failures++
    })
    outgoing.end()
  }
  const timer = setInterval(probe, everyMs)
  return {
    stop: (): ProbeResult => {
      clearInterval(timer)
      agent.destroy()
      const waitingAtEndMs = probing ? performance.now() - sentAt : 0
      return { answered: latencies(times), failures, waitingAtEndMs }
    },
  }
}
