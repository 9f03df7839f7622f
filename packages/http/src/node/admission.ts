import type { IncomingMessage, RequestListener, ServerResponse } from "node:http"
import { performance } from "node:perf_hooks"
import { apiError, errorBodyText, jsonContentType } from "../vocabulary/api-error.js"
import { retryAfterSeconds } from "../vocabulary/headers.js"
import { silentLogger, type Logger } from "../vocabulary/logger.js"
import { requestIdFor, requestIdHeader } from "../request/request-id.js"
import type { OverloadReadings } from "../observability/metrics.js"
import { boundUnwantedBodies, closeAfterAnswer, unwantedBodyBudget } from "./connection-closing.js"
import { longestCpuFreezeMs } from "./cpu-throttle.js"
import { loopThreadRunnableMs } from "./loop-thread.js"

/**
 * How the server refuses what it cannot serve in time: CoDel's two durations ("Controlling Queue
 * Delay", and "Fail at Scale"'s controlled delay), in milliseconds. Each request's wait is
 * estimated as Node hands it over (see `admissionControl`). While waits stay above `targetMs`
 * for less than `intervalMs` (a burst), every request is served; once they have stayed above it
 * for `intervalMs` (a standing queue: more arrives than is served), each request that has waited
 * longer than `targetMs` is refused with 503 `overloaded`, and those that have not are served.
 * The queue lies down again once no request has waited longer than `targetMs` for a second, or
 * `intervalMs` if longer (`leastCalmMs`; a loop that fell idle for a moment in an overload does not
 * let the next turn's backlog in).
 *
 * Under a CPU quota (a container's CPU limit) the process is frozen for part of every period once
 * it has used its share, and a request arriving then waits out the freeze however light the load:
 * that wait is no queue, and refusing would not shorten it. So the target in force is `targetMs`
 * plus the quota's longest freeze (`longestCpuFreezeMs`, read again every `quotaReadMs`).
 *
 * A refusal sheds the CPU a request would have cost, and nothing else: it shortens the waits
 * only when the loop spent them computing. A loop blocked in a system call (an SQLite commit's
 * `fsync` on a disk busy with a backup beside the server, a WAL checkpoint) makes requests wait
 * as long, and refusing them frees nothing: the queue counts as standing only for an interval in
 * which the loop's thread wanted the CPU (ran, or waited for it) for at least `cpuBoundShare` of
 * the time, and this is asked again each interval while waits stay above the target. Nor does
 * it stand behind fewer than `fewestQueued` requests: a few clients in a closed loop, each
 * waiting for the others' requests in a slow process, are no overload.
 *
 * Nothing here is a rate or a concurrency limit: what is served adapts to what the process can
 * serve (a CPU quota, a slower disk, a noisy neighbour) because each request is judged by how long
 * it waited, as CoDel judges packets by their sojourn time; the queue's length is only a floor
 * below which there is no queue. Unlike a
 * flag raised by sampled event-loop delay (`@fastify/under-pressure`), which refuses everything
 * until it clears and then lets one turn take everything queued, each turn here serves what is
 * still in time and refuses only the rest.
 */
export interface OverloadOptions {
  /** The wait a standing queue is cut back to. */
  readonly targetMs: number
  /** How long waits may stay above `targetMs` before the queue counts as standing. */
  readonly intervalMs: number
  /** The paths (without the query) never refused: probes and scrapes must see an overloaded server. */
  readonly exemptPaths: ReadonlyArray<string>
}

export const defaultOverload: OverloadOptions = {
  targetMs: 50,
  intervalMs: 200,
  exemptPaths: ["/healthz", "/readyz", "/metrics"],
}

/** Told of what admission control does: its overload episodes logged, its readings watched. */
export interface OverloadObservers {
  /** One line when an overload episode begins, one when it ends; nowhere unless given. */
  readonly logger?: Logger
  /** Given the readings once, when the server is made (`Metrics.watchOverload`). */
  readonly watchOverload?: (readings: OverloadReadings) => void
}

/**
 * The least time no request may have waited longer than the target before a standing queue lies
 * down (the interval, if longer). Refusing holds the waits under the target for a few turns at a
 * time while the overload goes on: at twice capacity on durable creates, for 200 to 300 ms about
 * once a second. A queue that lay down then let every request in until the waits had stood above
 * the target for an interval again, and the turns that followed made requests wait up to 500 ms
 * before they were even refused. While no request waits past the target a standing queue refuses
 * nothing, so staying up longer costs only the late requests of the second after an overload.
 */
const leastCalmMs = 1_000

/** An episode ends once a second has gone by without a refusal. */
const episodeQuietMs = 1_000

const overloaded = apiError(
  "overloaded",
  "the server is overloaded and refused this request before doing any of it; retry after Retry-After seconds",
)
const refusalBody = errorBodyText(overloaded)
/** The refusal's head, but for its request id: built once. */
const refusalHeaders: ReadonlyArray<string> = [
  "Content-Type",
  jsonContentType,
  "Content-Length",
  String(Buffer.byteLength(refusalBody)),
  "X-Content-Type-Options",
  "nosniff",
  "Retry-After",
  String(retryAfterSeconds),
]

/**
 * Whether the connection may be kept after the refusal: its framing is unambiguous and what
 * remains of the body is worth Node reading and dropping. Otherwise the refusal closes it, as
 * `boundUnwantedBodies` does for any answer sent without reading a body.
 */
const keepsConnection = (request: IncomingMessage): boolean => {
  if (request.headers["transfer-encoding"] !== undefined) return false
  if (request.httpVersion !== "1.1" && request.httpVersion !== "1.0") return false
  const length = request.headers["content-length"]
  return length === undefined || Number(length) <= unwantedBodyBudget
}

/** Answers 503 `overloaded` with `Retry-After`: a head built once, the request's id its only part. */
const writeRefusal = (request: IncomingMessage, response: ServerResponse): void => {
  const head = [...refusalHeaders, requestIdHeader, requestIdFor(request.headers["x-request-id"])]
  response.writeHead(overloaded.status, head)
  response.end(request.method === "HEAD" ? undefined : refusalBody)
}

const refuseClosing = boundUnwantedBodies((request, response) => {
  closeAfterAnswer(response)
  writeRefusal(request, response)
})

const pathOf = (url: string): string => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * The least share of an interval the loop's thread must have wanted the CPU for waits above the
 * target to count as a queue of CPU work: an overloaded loop wants it all the time (a quota's
 * freezes and a neighbour's turns count as wanting it), a loop stalled on a disk much less.
 */
const cpuBoundShare = 0.5

/**
 * The fewest requests a standing queue holds. Waits above the target behind fewer are a few
 * clients' requests each waiting for the others' (clients in a closed loop, in a slow, cold or
 * CPU-starved process): refusing them frees nothing for long, since each client sends its next
 * request at once, and would deny honest clients service. An overload's queue grows past any such
 * number. The queue is estimated by Little's law, the wait over the loop's busy time per request
 * decided in the interval. Held at the target by its refusals, a standing queue holds the target's
 * worth of decisions: a process deciding fewer than this many in that time lies down once it
 * refuses and stands again once the excess has queued up, so its target wants to be longer.
 */
const fewestQueued = 32

/** How often the CPU quota is read again: a process may be moved into a group, or its limit changed. */
const quotaReadMs = 1_000

/**
 * The longest freeze of the process's CPU quota, as last read (0 until read): one reader per
 * process, started with the first admission control, its timer unref'd.
 */
const cpuFreeze = { ms: 0, watched: false }
const watchCpuFreeze = () => {
  if (cpuFreeze.watched) return
  cpuFreeze.watched = true
  const read = () =>
    void longestCpuFreezeMs().then((ms) => {
      cpuFreeze.ms = ms
    })
  read()
  setInterval(read, quotaReadMs).unref()
}

/** How often the loop clock ticks, in ms: it bounds how stale a wait's lower bound can be. */
const clockTickMs = 10

/**
 * The times of the loop clock's last ticks: an unref'd interval timer, one per process, started
 * with the first admission control. A timer runs at most once a loop turn, in the turn's timers
 * phase, before its poll: so the tick before the last ran in an earlier turn than the one reading
 * requests now, before that turn's poll, and the one before it two turns back at the latest.
 */
const loopClock = { ticks: [0, 0, 0], started: false }
const startLoopClock = () => {
  if (loopClock.started) return
  loopClock.started = true
  const now = performance.now()
  loopClock.ticks = [now, now, now]
  setInterval(() => {
    const [, second = 0, last = 0] = loopClock.ticks
    loopClock.ticks = [second, last, performance.now()]
  }, clockTickMs).unref()
}
/** The tick `back` ticks before the last (1 or 2). */
const tickBefore = (back: 1 | 2): number => loopClock.ticks[2 - back] ?? 0

/** The shortest span (ms) a turn's arrivals are counted over to measure their rate. */
const shortestRateSpanMs = 1

/**
 * Admission control: a request listener's gate that refuses, before the listener runs (before
 * the app, its key check, body reading and storage), the requests that have waited too long.
 *
 * Node does not say when a request arrived: its bytes wait in the kernel until the event loop
 * polls for them, once a turn. So each request's wait is bounded from above by the time since
 * the earliest it can have arrived:
 * - on a connection that has sent a request before, after the previous turn's poll (it would have
 *   been read then otherwise), and after that request was admitted or refused (a client sends the
 *   next once the last is answered; one pipelining its requests is taken as not having waited);
 * - as a connection's first request, after the poll before the one that accepted the connection,
 *   so two turns back (it may have waited in the accept queue, then one more turn to be read);
 * - either way, after this turn's poll began when the loop was idle just before it.
 * The polls are known as the moments turns that read requests began reading them, or bounded by
 * the loop clock when turns without requests came between. The bound is thus the age of the
 * current turn (what the requests read before it took) plus the length of one or two turns before
 * (the loop's lag, a CPU quota's throttling included).
 *
 * A turn reads requests in the order they arrived (epoll hands over sockets in the order they
 * became readable), spread over the span since the earliest they can have arrived. So on a
 * connection seen before, the request a turn reads `n`th is taken to have arrived `n` arrivals
 * after that earliest moment, at the rate the last turns' requests arrived (an average of each
 * turn's count over its span), and never after the turn began reading. The bound alone is the
 * wait of the turn's first request; for the last it is up to twice the true wait once turns span
 * a CPU quota's period, and under a quota that refused requests that had waited less than the
 * target (23 to 41 % of those refused in three episodes at 0.8 of capacity, measured against
 * the times the bench's requests were sent; 2 to 5 % judged by arrival order). A rate that has
 * just risen takes the later requests to have arrived at the turn's start: their wait is judged
 * short for a turn or two, and admitted, which errs toward serving.
 *
 * Each wait is compared with the target in order: an overloaded turn serves requests until the
 * time it has taken makes the rest too late, then refuses those at the cost of a refusal; the
 * next turn, short, serves again.
 */
export const admissionControl = (
  options: OverloadOptions,
  observers: OverloadObservers = {},
): ((listener: RequestListener) => RequestListener) => {
  const { intervalMs } = options
  const calmMs = Math.max(intervalMs, leastCalmMs)
  const exempt: ReadonlySet<string> = new Set(options.exemptPaths)
  const logger = observers.logger ?? silentLogger
  const timing = performance.nodeTiming
  startLoopClock()
  watchCpuFreeze()
  const targetMs = () => options.targetMs + cpuFreeze.ms

  let admitted = 0
  let refused = 0
  let longestWaitMs = 0

  /** When the current turn read its first request; undefined between turns. */
  let turnStartedAt: number | undefined
  /** How many requests the current turn has read. */
  let readInTurn = 0
  /** Whether the loop was idle just before the current turn: then its arrivals have no span. */
  let turnAfterIdle = true
  /** Requests arriving per ms, averaged over the last turns that read requests; 0 until known. */
  let arrivalsPerMs = 0
  /** When the last turn that read requests began reading them, and the one before it. */
  let previousTurnAt = performance.now()
  let turnBeforeAt = previousTurnAt
  /** The earliest a request read in this turn can have arrived, on a connection seen before. */
  let arrivedAfter = 0
  /** The same, as its connection's first request. */
  let firstArrivedAfter = 0
  /** The loop's idle time (ms) when the current turn began. */
  let idleAtTurn = timing.idleTime
  /**
   * The interval under way in which every request has waited longer than the target (from
   * CoDel's first-above time), and, when it began, how long the loop's thread had wanted the CPU,
   * the loop's idle time and the requests decided; undefined once one has waited less, or the
   * loop was idle.
   */
  let above: { at: number; runnableMs: number; idleMs: number; decided: number } | undefined
  /** What `above` keeps of the moment `now`. */
  const intervalMark = (now: number) => ({
    at: now,
    runnableMs: loopThreadRunnableMs(),
    idleMs: timing.idleTime,
    decided: admitted + refused,
  })
  /** The last time a request had waited longer than the target. */
  let aboveTargetAt = Number.NEGATIVE_INFINITY
  /**
   * Whether the queue stands: waits have stayed above the target for an interval. It lies down
   * once no request has waited longer than the target for `calmMs`.
   */
  let standing = false

  /** When each connection's last request was admitted or refused. */
  const lastDecided = new WeakMap<object, number>()

  const endTurn = () => {
    if (turnStartedAt === undefined) return
    const spanMs = turnStartedAt - arrivedAfter
    if (!turnAfterIdle && spanMs >= shortestRateSpanMs) {
      const rate = readInTurn / spanMs
      arrivalsPerMs = arrivalsPerMs === 0 ? rate : (arrivalsPerMs + rate) / 2
    }
    turnBeforeAt = previousTurnAt
    previousTurnAt = turnStartedAt
    turnStartedAt = undefined
  }

  /** The overload episode under way: when it began, the refusals before it, the last count seen. */
  let episode:
    { readonly startedAt: number; readonly refusedBefore: number; seen: number } | undefined
  let lastRefusedAt = 0
  let episodeWatch: NodeJS.Timeout | undefined

  const watchEpisode = () => {
    if (episode === undefined) return
    if (refused !== episode.seen) {
      episode.seen = refused
      return
    }
    logger.info(
      {
        durationMs: Math.round(lastRefusedAt - episode.startedAt),
        refused: refused - episode.refusedBefore,
      },
      "overload over: requests are admitted again",
    )
    episode = undefined
    clearInterval(episodeWatch)
  }

  const beginEpisode = (now: number, waitedMs: number) => {
    episode = { startedAt: now, refusedBefore: refused - 1, seen: refused }
    episodeWatch = setInterval(watchEpisode, episodeQuietMs).unref()
    logger.warn(
      { waitedMs: Math.round(waitedMs), targetMs: targetMs(), intervalMs },
      "overloaded: refusing the requests that waited too long, with 503, until the load falls",
    )
  }

  observers.watchOverload?.({
    admitted: () => admitted,
    refused: () => refused,
    takeLongestWaitSeconds: () => {
      const longest = longestWaitMs / 1000
      longestWaitMs = 0
      return longest
    },
    standing: () => standing,
    targetSeconds: () => targetMs() / 1000,
  })

  return (listener) => (request, response) => {
    const now = performance.now()
    if (turnStartedAt === undefined) {
      turnStartedAt = now
      const idle = timing.idleTime
      // The loop waited for I/O since the last turn began: what this turn reads came after. The
      // queue may still stand: an overload leaves the loop idle for moments too.
      turnAfterIdle = idle > idleAtTurn
      if (turnAfterIdle) {
        arrivedAfter = firstArrivedAfter = now
        above = undefined
      } else {
        arrivedAfter = Math.max(previousTurnAt, tickBefore(1))
        firstArrivedAfter = Math.max(turnBeforeAt, tickBefore(2))
      }
      idleAtTurn = idle
      readInTurn = 0
      setImmediate(endTurn)
    }
    // Unknown, the rate is taken as infinite: every request arrived as early as it can have.
    const arrivalOffsetMs = readInTurn / (arrivalsPerMs || Number.POSITIVE_INFINITY)
    readInTurn++
    const { socket } = request
    const decidedAt = lastDecided.get(socket)
    const waitedMs =
      now -
      (decidedAt === undefined
        ? firstArrivedAfter
        : Math.max(Math.min(turnStartedAt, arrivedAfter + arrivalOffsetMs), decidedAt))
    lastDecided.set(socket, now)
    if (waitedMs > longestWaitMs) longestWaitMs = waitedMs
    const target = targetMs()
    if (waitedMs <= target) {
      above = undefined
      if (standing && now - aboveTargetAt > calmMs) standing = false
    } else {
      aboveTargetAt = now
      if (above === undefined) above = intervalMark(now)
      else if (now - above.at > intervalMs) {
        const next = intervalMark(now)
        const busyMs = now - above.at - (next.idleMs - above.idleMs)
        const queued = (waitedMs * Math.max(1, next.decided - above.decided)) / Math.max(1, busyMs)
        // False when the counter could not be read: no queue is taken for one unseen.
        standing =
          next.runnableMs - above.runnableMs >= cpuBoundShare * (now - above.at) &&
          queued >= fewestQueued
        above = next
      }
    }
    if (standing && waitedMs > target && !exempt.has(pathOf(request.url ?? ""))) {
      refused++
      lastRefusedAt = now
      if (episode === undefined) beginEpisode(now, waitedMs)
      if (keepsConnection(request)) writeRefusal(request, response)
      else refuseClosing(request, response)
      return
    }
    admitted++
    listener(request, response)
  }
}
