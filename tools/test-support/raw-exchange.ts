import { connect } from "node:net"

/** A response as it came over the socket: header names lower-case, repeated ones joined. */
export interface RawResponse {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: Buffer
}

/** How an exchange ended: a whole response, the connection closed first, or neither in time. */
export type RawOutcome =
  | { readonly kind: "answered"; readonly response: RawResponse; readonly ms: number }
  | { readonly kind: "closed"; readonly received: string; readonly ms: number }
  | { readonly kind: "timed out"; readonly received: string; readonly ms: number }

export interface ExchangeOptions {
  /** A response to HEAD has no body whatever its headers say. */
  readonly head: boolean
  /** How long to wait for the whole response. */
  readonly timeoutMs: number
  /** The source address, any of 127.0.0.0/8, so one test can be several clients. */
  readonly from?: string
}

type Parsed =
  | { readonly kind: "incomplete" }
  | { readonly kind: "malformed"; readonly reason: string }
  | { readonly kind: "response"; readonly response: RawResponse }

const headEnd = Buffer.from("\r\n\r\n")

/** A chunked body decoded, or undefined while its last chunk has not arrived. */
const dechunk = (data: Buffer): Buffer | undefined | Error => {
  const chunks: Array<Buffer> = []
  let offset = 0
  for (;;) {
    const lineEnd = data.indexOf("\r\n", offset)
    if (lineEnd === -1) return undefined
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString("latin1"), 16)
    if (!Number.isSafeInteger(size)) return new Error("a chunk size is not hexadecimal")
    if (size === 0) return data.indexOf(headEnd, lineEnd) === -1 ? undefined : Buffer.concat(chunks)
    if (data.length < lineEnd + 2 + size + 2) return undefined
    chunks.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    offset = lineEnd + 2 + size + 2
  }
}

/**
 * The first response in `data`, 1xx interim responses skipped. `closed`: the connection has
 * closed, which ends a body sent without a length.
 */
const parseResponse = (data: Buffer, head: boolean, closed: boolean): Parsed => {
  const end = data.indexOf(headEnd)
  if (end === -1) return { kind: "incomplete" }
  const [statusLine = "", ...lines] = data.subarray(0, end).toString("latin1").split("\r\n")
  const status = /^HTTP\/1\.[01] ([0-9]{3})(?: |$)/.exec(statusLine)?.[1]
  if (status === undefined) return { kind: "malformed", reason: `status line ${statusLine}` }
  const headers = new Map<string, string>()
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon <= 0) return { kind: "malformed", reason: `header line ${line}` }
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value)
  }
  const code = Number(status)
  const afterHead = data.subarray(end + headEnd.length)
  if (code >= 100 && code < 200) return parseResponse(afterHead, head, closed)
  const response = (body: Buffer): Parsed => ({
    kind: "response",
    response: { status: code, headers, body },
  })
  if (head || code === 204 || code === 304) return response(Buffer.alloc(0))
  if (/\bchunked\b/i.test(headers.get("transfer-encoding") ?? "")) {
    const body = dechunk(afterHead)
    if (body instanceof Error) return { kind: "malformed", reason: body.message }
    return body === undefined ? { kind: "incomplete" } : response(body)
  }
  const length = headers.get("content-length")
  if (length === undefined) {
    return closed ? response(afterHead) : { kind: "incomplete" }
  }
  if (!/^[0-9]+$/.test(length)) return { kind: "malformed", reason: `Content-Length ${length}` }
  return afterHead.length < Number(length)
    ? { kind: "incomplete" }
    : response(afterHead.subarray(0, Number(length)))
}

const printable = (data: Buffer) => data.toString("latin1").slice(0, 300)

/**
 * Opens a connection, writes `request` as it is, and waits for the first whole response (the
 * connection may stay open after it), for the connection to close, or for `timeoutMs`.
 */
export const exchange = (
  origin: string,
  request: Buffer | string,
  options: ExchangeOptions,
): Promise<RawOutcome> =>
  new Promise((resolve) => {
    const { hostname, port } = new URL(origin)
    const started = performance.now()
    const socket = connect({
      port: Number(port),
      host: hostname,
      ...(options.from === undefined ? {} : { localAddress: options.from }),
    })
    let received = Buffer.alloc(0)
    let settled = false
    const settle = (outcome: RawOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(outcome)
    }
    const ms = () => performance.now() - started
    const timer = setTimeout(
      () => settle({ kind: "timed out", received: printable(received), ms: ms() }),
      options.timeoutMs,
    )
    const conclude = (closed: boolean) => {
      const parsed = parseResponse(received, options.head, closed)
      if (parsed.kind === "response") {
        settle({ kind: "answered", response: parsed.response, ms: ms() })
      } else if (parsed.kind === "malformed") {
        settle({ kind: "closed", received: `${parsed.reason}: ${printable(received)}`, ms: ms() })
      } else if (closed) {
        settle({ kind: "closed", received: printable(received), ms: ms() })
      }
    }
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      conclude(false)
    })
    socket.on("close", () => conclude(true))
    socket.on("error", () => {
      // What arrived before a reset still counts; "close" follows and decides.
    })
    socket.write(request)
  })

/** Sends bytes as they are and returns what the server wrote back, for requests fetch will not make. */
export const rawRequest = (origin: string, request: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin)
    const socket = connect(Number(port), hostname)
    const chunks: Array<Buffer> = []
    socket.on("data", (chunk) => chunks.push(chunk))
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    socket.on("error", reject)
    socket.write(request)
  })
