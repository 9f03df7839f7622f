import {
  ServerResponse,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type RequestListener,
} from "node:http"
import { Socket } from "node:net"
import type { Duplex } from "node:stream"

/** How long a client given a final reply has to read it and close, before its socket is cut. */
const lingerMs = 1_000

/**
 * How much of a request body the server still reads once it has answered without it, as Go's
 * net/http does: a body no longer than this is read and dropped and the connection kept; a longer
 * one, or one of unknown length, closes the connection after at most this much more.
 */
export const unwantedBodyBudget = 256 * 1024

/**
 * Sends the last bytes and closes. Ending closes only this side: a client that keeps its own side
 * open (trickling bytes, say) would otherwise hold a socket that Node no longer times.
 */
export const endAndCut = (socket: Duplex, reply = ""): void => {
  const cut = setTimeout(() => socket.destroy(), lingerMs).unref()
  socket.once("close", () => clearTimeout(cut))
  // Ending twice is an error, which destroys the socket before the reply is flushed.
  if (!socket.writableEnded) socket.end(reply)
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

/** Sockets answered for bytes that do not parse: how much had been read of each then. */
const answeredUnparsed = new WeakMap<Duplex, number>()

const bytesReadOf = (socket: Duplex): number => (socket instanceof Socket ? socket.bytesRead : 0)

/**
 * Whether this is the first time the socket's bytes fail to parse: the time to answer. Node's
 * parser reports the error again for every chunk that follows (the rest of a body the client is
 * still sending). Those are read and dropped, as an unwanted body is: up to `unwantedBodyBudget`
 * past the answer and for at most `lingerMs` (`endAndCut`), then the socket is cut. Cut at once,
 * it would be reset under the answer, which the client can then lose unread.
 */
export const firstParseError = (socket: Duplex): boolean => {
  const readBefore = answeredUnparsed.get(socket)
  if (readBefore === undefined) {
    answeredUnparsed.set(socket, bytesReadOf(socket))
    return true
  }
  if (bytesReadOf(socket) - readBefore > unwantedBodyBudget) socket.destroy()
  return false
}

/** Connections whose answer under way is their last: no request that follows it is run. */
const lastAnswerUnderWay = new WeakSet<Duplex>()

/** Makes the answer its connection's last: it says `Connection: close`, and nothing after it runs. */
export const closeAfterAnswer = (response: ServerResponse): void => {
  response.shouldKeepAlive = false
  lastAnswerUnderWay.add(response.req.socket)
}

/**
 * Runs no request that arrives after its connection's last answer (one pipelined after a refused
 * head, or behind an unwanted body): Node would run it, and only its answer would go nowhere.
 * Node's parser already refuses bytes after a request that said `Connection: close`.
 */
export const runNothingAfterLastAnswer =
  (handler: RequestListener): RequestListener =>
  (request, response) => {
    const { socket } = request
    // Left unread: a body it has stops the reading once Node's buffer for it is full.
    if (lastAnswerUnderWay.has(socket) || socket.writableEnded) {
      response.shouldKeepAlive = false
      return
    }
    handler(request, response)
  }

/** Whether more of the body is yet to arrive than is worth reading, or how much is unknown. */
const tooMuchBodyToCome = (request: IncomingMessage): boolean => {
  if (request.complete) return false
  if (request.headers["transfer-encoding"] !== undefined) return true
  return Number(request.headers["content-length"] ?? 0) > unwantedBodyBudget
}

/**
 * The server's response: sent while more of the request's body is yet to arrive than the server
 * will read (a 401 to a large upload, say), it closes the connection; otherwise Node would read
 * and drop whatever the client sends until the request timeout.
 */
export class AppServerResponse extends ServerResponse {
  override writeHead(
    statusCode: number,
    statusMessage?: string,
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this
  override writeHead(
    statusCode: number,
    messageOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (this.shouldKeepAlive && tooMuchBodyToCome(this.req)) closeAfterAnswer(this)
    return typeof messageOrHeaders === "string"
      ? super.writeHead(statusCode, messageOrHeaders, headers)
      : super.writeHead(statusCode, messageOrHeaders)
  }
}

/**
 * Bounds what the server reads of a body after answering without it. A keep-alive answer was
 * only kept because at most `unwantedBodyBudget` remained, which Node reads and drops. An answer
 * that closes the connection lingers instead of Node's close, which destroys the socket as soon
 * as the answer is flushed: with body bytes still arriving that close is a reset, and a reset can
 * make the client lose the answer unread. What still arrives is read and dropped, up to the
 * budget and for at most `lingerMs`, then the socket is cut.
 */
export const boundUnwantedBodies =
  (handler: RequestListener): RequestListener =>
  (request, response) => {
    const { socket } = request
    let lingering = false
    // Before Node's own "finish" listener, which would drop the rest of the body unseen: a body
    // that is being read (and so counted) is left to its reader.
    response.prependOnceListener("finish", () => {
      if (request.complete || response.shouldKeepAlive) return
      lingering = true
      // Counted off the socket, framing included, as each piece of body comes through.
      const readBefore = socket.bytesRead
      request.on("data", () => {
        if (socket.bytesRead - readBefore > unwantedBodyBudget) socket.destroy()
      })
    })
    // After Node's, which has ended the socket and registered its destroy for once it is flushed.
    response.once("finish", () => {
      if (!lingering || socket.destroyed) return
      socket.removeListener("finish", socket.destroy)
      endAndCut(socket)
    })
    handler(request, response)
  }
