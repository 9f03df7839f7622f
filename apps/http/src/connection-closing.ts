import type { IncomingMessage, RequestListener, ServerResponse } from "node:http"
import type { Duplex } from "node:stream"

/** How long a client given a final reply has to read it and close, before its socket is cut. */
const lingerMs = 1_000

/**
 * Sends the last bytes and closes. Ending closes only this side: a client that keeps its own side
 * open (trickling bytes, say) would otherwise hold a socket that Node no longer times.
 */
export const endAndCut = (socket: Duplex, reply = ""): void => {
  const cut = setTimeout(() => socket.destroy(), lingerMs).unref()
  socket.once("close", () => clearTimeout(cut))
  socket.end(reply)
}

interface Answering {
  readonly request: IncomingMessage
  readonly response: ServerResponse
}

/** The requests each connection has yet to finish answering, in order (HTTP/1.1 pipelining). */
const answering = new WeakMap<Duplex, ReadonlyArray<Answering>>()

/** Keeps track of the requests each connection is answering, for `closeAfterPendingAnswer`. */
export const trackPendingAnswers =
  (handler: RequestListener): RequestListener =>
  (request, response) => {
    const { socket } = request
    const current = { request, response }
    answering.set(socket, [...(answering.get(socket) ?? []), current])
    response.once("close", () => {
      const remaining = (answering.get(socket) ?? []).filter((item) => item !== current)
      if (remaining.length === 0) answering.delete(socket)
      else answering.set(socket, remaining)
    })
    handler(request, response)
  }

/**
 * When the connection is still answering a request that arrived whole, a problem found in the
 * bytes after it must not be answered now: that reply would be read as the earlier request's
 * answer (a 400 for a create that succeeds). The earlier answer is finished instead, then the
 * connection closed. Says whether it was so.
 */
export const closeAfterPendingAnswer = (socket: Duplex): boolean => {
  const first = answering.get(socket)?.[0]
  if (first?.request.complete !== true) return false
  first.response.shouldKeepAlive = false
  first.response.once("finish", () => endAndCut(socket))
  return true
}
