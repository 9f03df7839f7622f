import { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { normalizedAddress } from "../request/client-address.js"
import { silentLogger, type Logger } from "../vocabulary/logger.js"

/**
 * Why the server refused a request or a connection before the app saw it. A fixed set: it is a
 * metric label.
 */
export type EdgeRefusalReason =
  /** Bytes that do not parse as an HTTP request. */
  | "bad_request"
  /** Headers or the whole request too slow to arrive (408). */
  | "request_timeout"
  | "headers_too_large"
  /** An `Expect` other than `100-continue` (417). */
  | "expectation_failed"
  /** `CONNECT`. */
  | "tunnel"
  /** An HTTP/1.1 request without `Host`, or any with more than one. */
  | "host_header"
  /** `Transfer-Encoding` in an HTTP/1.0 request. */
  | "framing"
  /** A version other than HTTP/1.0 and HTTP/1.1. */
  | "http_version"
  /** `PETSTORE_MAX_CONNECTIONS` reached: refused at accept. */
  | "connection_limit"
  /** `PETSTORE_MAX_CONNECTIONS_PER_ADDRESS` reached: refused at accept. */
  | "address_connection_limit"

export interface EdgeRefusal {
  readonly reason: EdgeRefusalReason
  /** The status answered; none for a connection refused at accept. */
  readonly status: number | undefined
  /** The client's address (see `normalizedAddress`), or `unknown`. */
  readonly address: string
  /** The id the answer's `X-Request-Id` carries; one made for the log when nothing is answered. */
  readonly requestId: string
}

/** What the server is told to do with its refusals, and whom it must not count. */
export interface EdgeObservers {
  /** Each refusal is an `info` line; nowhere unless given. */
  readonly logger?: Logger
  /** Counts each refusal (`Metrics.recordEdgeRefusal`); nothing unless given. */
  readonly recordRefusal?: (status: number | undefined, reason: EdgeRefusalReason) => void
  /**
   * Whether a socket's peer (the address as Node gives it, `::ffff:10.0.0.7` for an IPv4 client
   * of a dual-stack listener) is a proxy of yours: its connections carry many clients, so they
   * are exempt from the bound per address. None unless given.
   */
  readonly isTrustedProxy?: (peerAddress: string) => boolean
}

/** A peer's address as the limits count it, or `unknown`. */
export const countedAddress = (peer: string | undefined): string =>
  normalizedAddress(peer ?? "") ?? "unknown"

/** The socket's peer as the limits count it, or `unknown` (a socket already gone has none). */
export const peerAddress = (socket: Duplex): string =>
  countedAddress(socket instanceof Socket ? socket.remoteAddress : undefined)

/** Logs and counts a refusal. */
export const refusalReporter = (observers: EdgeObservers) => {
  const logger = observers.logger ?? silentLogger
  const record = observers.recordRefusal ?? (() => {})
  return (refusal: EdgeRefusal): void => {
    record(refusal.status, refusal.reason)
    if (logger.isLevelEnabled("info")) logger.info(refusal, "refused")
  }
}
