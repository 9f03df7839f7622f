import type { IncomingMessage, RequestListener, ServerResponse } from "node:http"
import { retryAfterSeconds } from "../vocabulary/headers.js"
import { aliveBody, notReadyErrors, readyBody } from "../observability/probe-answers.js"
import { writeError, writeJson } from "./error-reply.js"
import type { ProbeStateReader } from "./probe-state.js"
import { readOnlyListener, requestIdOf } from "./read-only-listener.js"

const probePaths = ["/healthz", "/readyz"] as const
type ProbePath = (typeof probePaths)[number]

/**
 * How long the main thread may go without a sign of life (a timer, a request taken) before a
 * probe waits for one: an overloaded thread takes a request every few dozen microseconds, a
 * thread that takes none and runs no timer for seconds is stuck. Past it a probe is answered
 * only once the thread shows life again, so that a liveness probe of a stuck process times out,
 * as it would on the API's port.
 */
export const stalledAfterMs = 2_000

/** How often a waiting probe looks at the heartbeat again. */
const recheckMs = 50

const noStore = { "Cache-Control": "no-store" }

/** The answer the app's own route would give, from the state the main thread last published. */
const answer = (
  path: ProbePath,
  state: ProbeStateReader,
  request: IncomingMessage,
  response: ServerResponse,
): void => {
  const requestId = requestIdOf(request)
  if (path === "/healthz") return writeJson(response, 200, JSON.stringify(aliveBody), requestId)
  const readiness = state.readiness()
  if (readiness === "ready") {
    return writeJson(response, 200, JSON.stringify(readyBody), requestId, noStore)
  }
  writeError(response, notReadyErrors[readiness], requestId, {
    ...noStore,
    "Retry-After": String(retryAfterSeconds),
  })
}

/**
 * What the probe port answers, from another thread than the main event loop's: `GET /healthz`
 * and `GET /readyz` (and HEAD) as the app's routes would, from what the main thread publishes in
 * `state` (its heartbeat, its readiness), and only while it shows life (see `stalledAfterMs`).
 * Any other path is 404, any other method 405 with `Allow`, with the Error body.
 */
export const probeListener = (state: ProbeStateReader): RequestListener =>
  readOnlyListener(probePaths, (path, request, response) => {
    const answerWhenAlive = (): void => {
      if (response.destroyed) return
      if (state.heartbeatAgeMs() <= stalledAfterMs) return answer(path, state, request, response)
      setTimeout(answerWhenAlive, recheckMs).unref()
    }
    answerWhenAlive()
  })
