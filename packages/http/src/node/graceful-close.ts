import type { RequestListener, Server, ServerResponse } from "node:http"
import { Server as NetServer } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { closeAfterAnswer } from "./connection-closing.js"
import { atQuietMoment } from "./quiet-moment.js"

export { quietWithinMs } from "./quiet-moment.js"

/**
 * How a server stops, each step bounded, in milliseconds. The steps, in order:
 *
 * 1. `drainMs`: it goes on accepting connections and answering as usual, kept-alive connections
 *    included, while a load balancer notices that it is not ready (the app's `/readyz`) and stops
 *    sending it requests. The drain ends at a quiet moment (see `atQuietMoment`), at most
 *    `quietWithinMs` later.
 * 2. It stops accepting connections: a balancer's next attempt is refused before any of the
 *    request is sent, which every balancer may retry elsewhere, a POST included. From then on each
 *    answer says `Connection: close` and its connection is closed after it, answers under way
 *    included (those whose head is not sent yet).
 * 3. `idleMs` later, the idle kept-alive connections left are closed. Until then a client may
 *    still send a request on one, and it is answered: closing it under the client could lose a
 *    request it is sending at that instant (a reset, which a balancer does not retry for a POST).
 *    Longer than the balancer's own idle timeout, the balancer has closed them first.
 * 4. `graceMs` after step 2, the connections of requests still in flight are cut.
 */
export interface CloseSteps {
  /** Step 1: how long it goes on accepting connections and serving; 0 unless given. */
  readonly drainMs?: number
  /** Step 3: how long idle kept-alive connections are left to their clients; 0 (none) unless given, at most `graceMs`. */
  readonly idleMs?: number
  /** Step 4: how long requests in flight may take once it no longer accepts connections. */
  readonly graceMs: number
}

/** How often connections that fall idle after step 3 (their answer was kept alive) are closed. */
const idleSweepMs = 50

/** What a server of `createServer` tells `closeGracefully`: its answers under way. */
interface Tracked {
  readonly answers: Set<ServerResponse>
  /** Set once it no longer accepts connections: every answer it begins is its connection's last. */
  closing: boolean
}

const tracked = new WeakMap<Server, Tracked>()

/**
 * Wraps a server's request listener so that `closeGracefully` knows the answers under way, and an
 * answer that begins once the server no longer accepts connections closes its connection;
 * `register` the server the listener is given to.
 */
export const trackAnswers = (
  handler: RequestListener,
): { readonly listener: RequestListener; readonly register: (server: Server) => void } => {
  const state: Tracked = { answers: new Set(), closing: false }
  return {
    listener: (request, response) => {
      if (state.closing) {
        closeAfterAnswer(response)
      } else {
        state.answers.add(response)
        response.once("close", () => state.answers.delete(response))
      }
      handler(request, response)
    },
    register: (server) => tracked.set(server, state),
  }
}

/**
 * Makes every answer from now on its connection's last: those under way whose head is not sent
 * yet, and those still to come on kept-alive connections. On a server `createServer` did not
 * make, the answers under way are not known: they keep their connection alive, and it is closed
 * once idle.
 */
const lastAnswers = (server: Server): void => {
  const state = tracked.get(server)
  if (state === undefined) {
    server.prependListener("request", (_request: unknown, response: ServerResponse) => {
      response.shouldKeepAlive = false
    })
    return
  }
  state.closing = true
  for (const response of state.answers) if (!response.headersSent) closeAfterAnswer(response)
}

/**
 * Steps 2 to 4: stops accepting connections at once, makes every answer from now on its
 * connection's last, and resolves once every connection is closed.
 */
const stopAccepting = (server: Server, idleMs: number, graceMs: number): Promise<void> =>
  new Promise<void>((resolve) => {
    let sweep: NodeJS.Timeout | undefined
    // http.Server's close: stops accepting if it still does, closes the idle connections and stops
    // checking the timeouts of the others (the cut bounds them).
    const closeIdle = (done?: () => void) => {
      server.close(done)
      sweep = setInterval(() => server.closeIdleConnections(), idleSweepMs)
    }
    const release =
      idleMs > 0 ? setTimeout(() => closeIdle(), Math.min(idleMs, graceMs)) : undefined
    const cut = setTimeout(() => server.closeAllConnections(), graceMs)
    const finished = () => {
      clearTimeout(release)
      clearTimeout(cut)
      clearInterval(sweep)
      resolve()
    }
    lastAnswers(server)
    // net.Server's close: stops accepting, and leaves every connection open.
    if (release === undefined) closeIdle(finished)
    else NetServer.prototype.close.call(server, finished)
  })

/**
 * Stops the server by the steps of `CloseSteps` and resolves once every connection is closed. A
 * number is `graceMs` alone: no drain, idle connections closed at once.
 */
export const closeGracefully = async (
  server: Server,
  steps: number | CloseSteps,
): Promise<void> => {
  const {
    drainMs = 0,
    idleMs = 0,
    graceMs,
  } = typeof steps === "number" ? { graceMs: steps } : steps
  if (drainMs <= 0) return stopAccepting(server, idleMs, graceMs)
  let lastConnectionAt = Number.NEGATIVE_INFINITY
  const connected = () => (lastConnectionAt = performance.now())
  server.on("connection", connected)
  await sleep(drainMs)
  return atQuietMoment(
    server,
    () => lastConnectionAt,
    () => {
      server.off("connection", connected)
      return stopAccepting(server, idleMs, graceMs)
    },
  )
}
