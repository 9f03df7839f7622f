import { connect, type Socket } from "node:net"

/** A response read off a raw connection: header names lower-case. */
export interface RawAnswer {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

/**
 * A connection written and read by hand, for several requests in turn: `answer()` takes the next
 * response off what has arrived (every answer of this server has a `Content-Length`).
 */
export interface RawConnection {
  readonly socket: Socket
  readonly answer: (timeoutMs?: number) => Promise<RawAnswer>
  /** Resolves with the time (`performance.now()`) the connection closed. */
  readonly closed: Promise<number>
  /** Whether the server has ended its side. */
  readonly ended: () => boolean
}

const headEnd = "\r\n\r\n"

const takeAnswer = (received: string): [RawAnswer, string] | undefined => {
  const end = received.indexOf(headEnd)
  if (end === -1) return undefined
  const [statusLine = "", ...lines] = received.slice(0, end).split("\r\n")
  const headers = new Map<string, string>()
  for (const line of lines) {
    const colon = line.indexOf(":")
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1])
  // An interim 100 Continue has no body.
  const length = status === 100 ? 0 : Number(headers.get("content-length") ?? 0)
  const bodyStart = end + headEnd.length
  if (received.length < bodyStart + length) return undefined
  const answer = { status, headers, body: received.slice(bodyStart, bodyStart + length) }
  const rest = received.slice(bodyStart + length)
  return status === 100 ? takeAnswer(rest) : [answer, rest]
}

/**
 * Opens a connection from `from` (any of 127.0.0.0/8). `allowHalfOpen`: the client keeps writing
 * after the server has ended its side, as one that does not care would.
 */
export const openRaw = (
  origin: string,
  options: { readonly from?: string; readonly allowHalfOpen?: boolean } = {},
): Promise<RawConnection> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin)
    const socket = connect({
      port: Number(port),
      host: hostname,
      localAddress: options.from ?? "127.0.0.1",
      allowHalfOpen: options.allowHalfOpen ?? false,
    })
    let received = ""
    let ended = false
    const waiting: Array<() => void> = []
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1")
      waiting.splice(0).forEach((wake) => wake())
    })
    socket.on("end", () => (ended = true))
    socket.on("error", () => {
      // A reset, or a write after the server let go: "close" follows.
    })
    const closed = new Promise<number>((done) =>
      socket.once("close", () => {
        done(performance.now())
        waiting.splice(0).forEach((wake) => wake())
      }),
    )
    const answer = (timeoutMs = 5_000) =>
      new Promise<RawAnswer>((done, fail) => {
        const timer = setTimeout(
          () => fail(new Error(`no whole answer in ${timeoutMs} ms: ${received.slice(0, 300)}`)),
          timeoutMs,
        )
        const attempt = () => {
          const taken = takeAnswer(received)
          if (taken !== undefined) {
            clearTimeout(timer)
            received = taken[1]
            return done(taken[0])
          }
          if (socket.destroyed) {
            clearTimeout(timer)
            return fail(new Error(`closed without a whole answer: ${received.slice(0, 300)}`))
          }
          waiting.push(attempt)
        }
        attempt()
      })
    socket.once("connect", () => resolve({ socket, answer, closed, ended: () => ended }))
    socket.once("error", reject)
  })
