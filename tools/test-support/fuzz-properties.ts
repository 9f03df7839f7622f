import assert from "node:assert/strict"
import fc from "fast-check"
import {
  describeRequest,
  encodeRequest,
  malformedRequest,
  type MalformedRequest,
} from "./malformed-requests.js"
import { exchange, type RawOutcome, type RawResponse } from "./raw-exchange.js"

/**
 * The fuzz suite's properties: malformed requests over raw sockets. Whatever arrives, the server
 * answers without a 5xx, in time, every error (Node's own replies included) as the Error body
 * whose `status` is the HTTP status, and it is healthy afterwards.
 */

/** Replay a failure with the seed it prints: `PETSTORE_FUZZ_SEED=<seed>`. */
export const seed = Number(process.env["PETSTORE_FUZZ_SEED"] ?? Date.now() % 2 ** 31)
let properties = 0
/** Each property draws its own values from the seed. */
export const parameters = <T>(numRuns: number): fc.Parameters<T> => ({
  seed: seed + properties++,
  numRuns,
})

/** Short limits for the app as tests build it, so a request that never finishes ends fast. */
export const shortLimits = {
  headersTimeoutMs: 500,
  requestTimeoutMs: 1_000,
  keepAliveTimeoutMs: 1_000,
  maxConnections: 1_000,
}
/** Finished requests are answered in milliseconds; this is generous for a loaded machine. */
export const answerWithinMs = 8_000
/** Unfinished ones are cut by the request timeout, checked every second. */
const cutWithinMs = shortLimits.requestTimeoutMs + 1_000 + answerWithinMs

/** A source address no fuzzed request came from, so no per-address throttle applies to it. */
const cleanAddress = "127.0.0.77"

const errorBodyKeys = ["code", "message", "status"]

/** An answer is a status below 500 and, when it is an error with a body, the Error body. */
const assertAcceptable = (request: MalformedRequest, response: RawResponse) => {
  const context = `${describeRequest(request)} answered ${response.status} ${response.body.toString("latin1").slice(0, 300)}`
  assert.ok(response.status >= 200 && response.status < 500, `a ${response.status}: ${context}`)
  if (response.status < 400) return
  if (request.method === "HEAD") {
    assert.equal(response.body.length, 0, `a HEAD answer with a body: ${context}`)
    return
  }
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/, context)
  const body: unknown = JSON.parse(response.body.toString("utf8"))
  assert.ok(typeof body === "object" && body !== null, context)
  assert.deepEqual(Object.keys(body).sort(), errorBodyKeys, context)
  assert.ok("status" in body && body.status === response.status, context)
  assert.ok("code" in body && typeof body.code === "string" && body.code !== "", context)
  assert.ok("message" in body && typeof body.message === "string", context)
}

const assertAnswered = (request: MalformedRequest, outcome: RawOutcome): void => {
  if (outcome.kind !== "answered") {
    assert.fail(
      `${outcome.kind} after ${Math.round(outcome.ms)} ms without an answer (${JSON.stringify(outcome.received)}): ${describeRequest(request)}`,
    )
  }
  assertAcceptable(request, outcome.response)
}

const send = (origin: string, request: MalformedRequest, timeoutMs: number) =>
  exchange(origin, encodeRequest(request), { head: request.method === "HEAD", timeoutMs })

/** Every finished request is answered, acceptably, in time. */
export const finishedRequestsProperty = (origin: string, key: string) =>
  fc.asyncProperty(malformedRequest({ key, unfinished: false }), async (request) =>
    assertAnswered(request, await send(origin, request, answerWithinMs)),
  )

/**
 * Requests cut short or framed to announce more than they send, several at once: each gets an
 * acceptable answer (408 once its time is up) or, when the server could not tell what was
 * asked, at least a closed connection; none holds its socket past the request timeout.
 */
export const unfinishedRequestsProperty = (origin: string, key: string) =>
  fc.asyncProperty(
    fc.array(malformedRequest({ key, unfinished: true }), { minLength: 8, maxLength: 8 }),
    async (requests) => {
      const outcomes = await Promise.all(
        requests.map((request) => send(origin, request, cutWithinMs)),
      )
      requests.forEach((request, index) => {
        const outcome = outcomes[index]
        assert.ok(outcome !== undefined)
        assert.notEqual(
          outcome.kind,
          "timed out",
          `still open after ${cutWithinMs} ms: ${describeRequest(request)}`,
        )
        if (outcome.kind === "answered") assertAcceptable(request, outcome.response)
        else assert.equal(outcome.received, "", `a partial answer: ${describeRequest(request)}`)
      })
    },
  )

/** `/healthz` and an authenticated listing both answer 200. */
export const assertHealthy = async (origin: string, key: string) => {
  const ask = (target: string, headers: string) =>
    exchange(
      origin,
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\n`,
      {
        head: false,
        timeoutMs: answerWithinMs,
        from: cleanAddress,
      },
    )
  for (const [target, headers] of [
    ["/healthz", ""],
    ["/v1/pets?limit=5", `Authorization: Bearer ${key}\r\n`],
  ] as const) {
    const outcome = await ask(target, headers)
    assert.ok(outcome.kind === "answered", `${target}: ${outcome.kind}`)
    assert.equal(outcome.response.status, 200, `${target}: ${outcome.response.body.toString()}`)
  }
}
