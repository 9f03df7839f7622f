import type { IncomingMessage } from "node:http"
import { isIPv4, isIPv6, type Socket } from "node:net"
import ipaddr from "ipaddr.js"
import proxyAddr from "proxy-addr"

/**
 * Which hops may name the client in `X-Forwarded-For`: `address` is a hop's address, `hop` its
 * distance from the server (0 is the socket's peer). As `proxy-addr` (Express's `trust proxy`)
 * takes it.
 */
export type TrustedProxies = (address: string, hop: number) => boolean

/** No proxy is trusted: the client is the socket's peer, whatever the headers say. */
export const noTrustedProxy: TrustedProxies = () => false

/**
 * The socket's peer is trusted, whoever it is, and nothing beyond it: the right-most
 * `X-Forwarded-For` entry is the client. Sound only where no client can reach the server but
 * through the proxy.
 */
export const anyPeerIsProxy: TrustedProxies = (_address, hop) => hop === 0

/**
 * Whether a socket's peer is one of the proxies the operator named: its connections carry many
 * clients. `anyPeerIsProxy` names none, since whoever connects may be a client.
 */
export const isNamedProxy =
  (trusted: TrustedProxies) =>
  (peer: string): boolean =>
    trusted !== anyPeerIsProxy && trusted(peer, 0)

/**
 * The proxies named by address or CIDR range (`10.0.0.0/8`, `2001:db8::/32`) or by `proxy-addr`'s
 * names (`loopback`, `linklocal`, `uniquelocal`); throws a `TypeError` naming a bad entry.
 */
export const trustedProxies = (entries: ReadonlyArray<string>): TrustedProxies =>
  proxyAddr.compile([...entries])

const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/
const ipv4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/

/** The text of an address without brackets, port or zone id, if it is an address at all. */
const bareAddress = (text: string): string | undefined => {
  const trimmed = text.trim()
  const unbracketed = bracketed.exec(trimmed)?.[1] ?? ipv4WithPort.exec(trimmed)?.[1] ?? trimmed
  const zoneless = unbracketed.split("%", 1)[0] ?? ""
  return isIPv4(zoneless) || isIPv6(zoneless) ? zoneless : undefined
}

/**
 * One spelling per client, so that no spelling gets a bucket of its own: brackets, ports and
 * IPv6 zone ids dropped, an IPv4-mapped IPv6 address is its IPv4 address, and an IPv6 address
 * counts by its /64, as one subscriber is usually given a whole /64 to pick from. Undefined when
 * `text` is not an address (node's strict parser: `010.0.7.5` is not one).
 */
export const normalizedAddress = (text: string): string | undefined => {
  const bare = bareAddress(text)
  if (bare === undefined) return undefined
  const address = ipaddr.process(bare)
  if (address.kind() === "ipv4") return address.toString()
  return `${address.toNormalizedString().split(":").slice(0, 4).join(":")}::/64`
}

/** How many characters of a claim that is no address are kept to name it. */
const claimLength = 64

/**
 * The client's address as the limits count it: the socket's peer, or, while the hops to the
 * right of an `X-Forwarded-For` entry are all trusted proxies, that entry (`proxy-addr`). An
 * entry that is no address was not written by a trusted proxy: it names the claim of whoever
 * sent it (`claim:…`), never the proxy, so it cannot lock out the proxy's other clients.
 */
export const clientAddress = (request: IncomingMessage, trusted: TrustedProxies): string => {
  if (trusted === noTrustedProxy) return peerAddress(request.socket)
  const claimed = proxyAddr(request, trusted)
  return normalizedAddress(claimed) ?? `claim:${claimed.trim().slice(0, claimLength)}`
}

/** Each connection's peer, spelled once: a keep-alive connection carries many requests. */
const peers = new WeakMap<Socket, string>()

const peerAddress = (socket: Socket): string => {
  let address = peers.get(socket)
  if (address === undefined) {
    address = normalizedAddress(socket.remoteAddress ?? "") ?? "unknown"
    peers.set(socket, address)
  }
  return address
}
