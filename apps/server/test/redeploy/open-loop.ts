import { Agent, request } from "node:http"

/** What one request of the load got. */
export type Outcome =
  | { readonly kind: "create" | "list"; readonly status: number; readonly body: string }
  | { readonly kind: "create" | "list"; readonly error: string }

export interface Sent {
  /** When it was due, in ms from the start of the load. */
  readonly dueMs: number
  readonly outcome: Outcome
}

/** A pet the service acknowledged with 201. */
export interface Acknowledged {
  readonly id: number
  readonly name: string
}

export interface LoadResult {
  readonly sent: ReadonlyArray<Sent>
  /** Every request whose answer was not the one expected (201 for a create, 200 for a list). */
  readonly failed: ReadonlyArray<Sent>
  readonly acknowledged: ReadonlyArray<Acknowledged>
}

export interface OpenLoopOptions {
  /** `http://127.0.0.1:<port>` of nginx; requests go to `/v1/pets`. */
  readonly origin: string
  readonly apiKey: string
  readonly perSecond: number
  /** One request in this many is a create; the others list a page. */
  readonly createEvery: number
  /** Names every pet it creates, so that they are told from others. */
  readonly namePrefix: string
}

/** An answer later than this counts as a failure: no user waits that long. */
const answerWithinMs = 15_000

/** How often the schedule is looked at; each look sends every request that has fallen due. */
const tickMs = 2

export interface OpenLoop {
  /** Sends `count` requests at once, beside the schedule: a spike. */
  readonly spike: (count: number) => void
  /** Stops scheduling, and resolves once every request sent has its outcome. */
  readonly stop: () => Promise<LoadResult>
}

/**
 * Requests at scheduled times (open loop: each is sent when it is due, whether or not the earlier
 * ones have been answered), over kept-alive connections, never retried.
 */
export const startOpenLoop = (options: OpenLoopOptions): OpenLoop => {
  // Enough connections that a slow answer never delays the next request: it gets one of its own.
  const agent = new Agent({ keepAlive: true, maxSockets: 256, timeout: 30_000 })
  const started = performance.now()
  const pending = new Set<Promise<void>>()
  const sent: Array<Sent> = []
  let next = 0

  const send = (index: number, dueMs: number) => {
    const kind = index % options.createEvery === 0 ? "create" : "list"
    const body =
      kind === "create"
        ? JSON.stringify({ name: `${options.namePrefix} ${index}`, categoryId: index % 7 })
        : undefined
    const done = new Promise<Outcome>((resolve) => {
      const outgoing = request(
        `${options.origin}/v1/pets${kind === "list" ? "?limit=20" : ""}`,
        {
          agent,
          method: kind === "create" ? "POST" : "GET",
          headers: {
            Authorization: `Bearer ${options.apiKey}`,
            ...(body === undefined
              ? {}
              : { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }),
          },
        },
        (response) => {
          let text = ""
          response.setEncoding("utf8")
          response.on("data", (chunk: string) => (text += chunk))
          response.on("end", () => resolve({ kind, status: response.statusCode ?? 0, body: text }))
          response.on("error", (error) => resolve({ kind, error: error.message }))
        },
      )
      outgoing.setTimeout(answerWithinMs, () =>
        outgoing.destroy(new Error(`no answer within ${answerWithinMs} ms`)),
      )
      outgoing.on("error", (error) => resolve({ kind, error: error.message }))
      outgoing.end(body)
    })
    const recorded = done.then((outcome) => void sent.push({ dueMs, outcome }))
    pending.add(recorded)
    void recorded.then(() => pending.delete(recorded))
  }

  // Poisson arrivals, as from many users independent of one another: exponential gaps, bunched
  // at times, `perSecond` on average.
  const gapMs = () => (-Math.log(1 - Math.random()) * 1000) / options.perSecond
  let nextDueMs = gapMs()
  const schedule = setInterval(() => {
    const elapsedMs = performance.now() - started
    while (nextDueMs <= elapsedMs) {
      send(next++, nextDueMs)
      nextDueMs += gapMs()
    }
  }, tickMs)

  return {
    spike: (count) => {
      const nowMs = performance.now() - started
      for (let index = 0; index < count; index++) send(next++, nowMs)
    },
    stop: async () => {
      clearInterval(schedule)
      while (pending.size > 0) await Promise.all(pending)
      agent.destroy()
      const acknowledged: Array<Acknowledged> = []
      const failed = sent.filter(({ outcome }) => {
        if (!("status" in outcome)) return true
        if (outcome.kind === "list") return outcome.status !== 200
        const pet = outcome.status === 201 ? petOf(outcome.body) : undefined
        if (pet !== undefined) acknowledged.push(pet)
        return pet === undefined
      })
      sent.sort((left, right) => left.dueMs - right.dueMs)
      return { sent, failed, acknowledged }
    },
  }
}

/** The id and name of the pet a 201 carries, if it carries one. */
const petOf = (body: string): Acknowledged | undefined => {
  const pet: unknown = JSON.parse(body)
  return typeof pet === "object" &&
    pet !== null &&
    "id" in pet &&
    "name" in pet &&
    typeof pet.id === "number" &&
    typeof pet.name === "string"
    ? { id: pet.id, name: pet.name }
    : undefined
}
