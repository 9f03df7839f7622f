import type { IncomingMessage } from "node:http"
import { isIPv4, isIPv6 } from "node:net"

/** Where a request came from, as the abuse limits count it. */
export interface ClientAddressOptions {
  /**
   * Whether a proxy in front appends the client's address to `X-Forwarded-For`. Only then is
   * the header read; otherwise anyone could name any address in it.
   */
  readonly trustProxy: boolean
}

const ipv4Mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i

/** The eight groups of an IPv6 address, `::` expanded. */
const ipv6Groups = (address: string): ReadonlyArray<string> => {
  const [head = "", tail] = address.split("::")
  const headGroups = head === "" ? [] : head.split(":")
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":")
  const zeros = Array.from({ length: 8 - headGroups.length - tailGroups.length }, () => "0")
  return [...headGroups, ...zeros, ...tailGroups]
}

/**
 * One spelling per client: an IPv4-mapped IPv6 address is its IPv4 address, and an IPv6
 * address counts by its /64, as one subscriber is usually given a whole /64 to pick from.
 */
const normalized = (address: string): string | undefined => {
  const bare = address.trim()
  const mapped = ipv4Mapped.exec(bare)?.[1]
  if (mapped !== undefined && isIPv4(mapped)) return mapped
  if (isIPv4(bare)) return bare
  if (!isIPv6(bare)) return undefined
  // A zone id or an embedded IPv4 part is rare enough to be kept whole.
  if (bare.includes("%") || bare.includes(".")) return bare.toLowerCase()
  const prefix = ipv6Groups(bare.toLowerCase())
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ""))
  return `${prefix.join(":")}::/64`
}

/**
 * The client's address: the socket's peer, or, behind a trusted proxy, the right-most
 * `X-Forwarded-For` entry. Entries to its left were sent by the client and prove nothing; the
 * right-most is the one the proxy appended. Several `X-Forwarded-For` headers count as one list
 * in order (Node joins them). If that entry is not an IP address the proxy is misconfigured,
 * and the socket's peer (the proxy) is used: throttling too broadly is safer than letting a
 * client choose its own address.
 */
export const clientAddress = (request: IncomingMessage, options: ClientAddressOptions): string => {
  const peer = normalized(request.socket.remoteAddress ?? "") ?? "unknown"
  if (!options.trustProxy) return peer
  const header = request.headers["x-forwarded-for"]
  if (header === undefined) return peer
  const forwarded = typeof header === "string" ? header : header.join(",")
  const rightMost = forwarded.slice(forwarded.lastIndexOf(",") + 1)
  return normalized(rightMost) ?? peer
}
