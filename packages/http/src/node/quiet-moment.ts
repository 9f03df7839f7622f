import type { Server } from "node:http"
import { setTimeout as sleep } from "node:timers/promises"
import { acceptQueueLength } from "./accept-queue.js"

/** How long no connection must have arrived for the moment to count as quiet. */
const quietMs = 50

/** The longest turn of the event loop after which it still counts as keeping up. */
const shortTurnMs = 1

/** How long the drain waits for a quiet moment, after which any moment with nobody waiting will do. */
const quietWaitMs = 1_000

/** The longest the drain goes on past `drainMs`, whatever the turns. */
export const quietWithinMs = 2_000

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * Whether no connection waits in the server's accept queue: as the kernel tells it where it can
 * (Linux); elsewhere, as guessed from the turn that has just ended: a short one leaves little
 * time for any to arrive.
 */
const nobodyWaiting = (server: Server, turnMs: number): boolean => {
  const address = server.address()
  const waiting =
    address === null || typeof address === "string" ? undefined : acceptQueueLength(address)
  return waiting === undefined ? turnMs <= shortTurnMs : waiting === 0
}

/**
 * Runs `act` (which closes the listener) at a moment when closing the listener resets nobody's
 * connection, as nearly as can be told, and resolves with what it returns. Closing a listening
 * socket resets the connections waiting in its accept queue, and a balancer has already sent a
 * request on those (a POST it will not retry). The event loop accepts one connection per turn
 * (libuv since 1.45), and a busy or starved process runs turns of hundreds of milliseconds while
 * a balancer that finds it slow opens ever more connections: 113 were reset in one restart behind
 * nginx on a loaded machine, closed on when no short turn had come.
 *
 * So `act` runs when the kernel says nobody waits, in the same synchronous step as that look:
 * only what the kernel completes in those microseconds can be reset. It looks in the check phase
 * of each turn, each turn accepting one more of those waiting. For up to `quietWaitMs` the moment
 * must also come once no connection has arrived for `quietMs`, when the balancer is not opening
 * any (one that opens connections all the time keeps too few idle). Where the kernel does not
 * tell, a short turn stands for its answer. Past `quietWithinMs`, any moment.
 */
export const atQuietMoment = async <A>(
  server: Server,
  lastConnectionAt: () => number,
  act: () => A,
): Promise<A> => {
  const started = performance.now()
  await nextTurn()
  let turnStartedAt = performance.now()
  for (;;) {
    await nextTurn()
    const now = performance.now()
    const waited = now - started
    const quietFor = now - lastConnectionAt()
    const quiet = quietFor >= quietMs || waited >= quietWaitMs
    if (waited >= quietWithinMs) return act()
    if (quiet && nobodyWaiting(server, now - turnStartedAt)) return act()
    if (!quiet) await sleep(Math.min(quietMs - quietFor, quietWaitMs - waited))
    await nextTurn()
    turnStartedAt = performance.now()
  }
}
