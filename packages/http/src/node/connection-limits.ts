import type { Server } from "node:http"
import type { Socket } from "node:net"
import { countedAddress, type EdgeRefusal } from "./edge-refusals.js"
import { newRequestId } from "../request/request-id.js"

export interface AddressLimit {
  /** Connections open at once from one address (an IPv6 address counts by its /64). */
  readonly max: number
  /** Peers whose connections are not counted: proxies, each carrying many clients. */
  readonly isExempt: (peerAddress: string) => boolean
  readonly onRefusal: (refusal: EdgeRefusal) => void
}

/**
 * Bounds the connections each address holds open, so that one client cannot take the whole of
 * `maxConnections` from the others. A connection over the bound is destroyed at accept, as
 * Node refuses those over `maxConnections`.
 */
export const limitConnectionsPerAddress = (server: Server, limit: AddressLimit): void => {
  const open = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const peer = socket.remoteAddress
    // No address: the peer has already gone, and the socket with it.
    if (peer === undefined || limit.isExempt(peer)) return
    const address = countedAddress(peer)
    const count = (open.get(address) ?? 0) + 1
    if (count > limit.max) {
      socket.destroy()
      limit.onRefusal({
        reason: "address_connection_limit",
        status: undefined,
        address,
        requestId: newRequestId(),
      })
      return
    }
    open.set(address, count)
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

/** Reports the connections Node refuses at accept for `maxConnections`. */
export const reportDroppedConnections = (
  server: Server,
  onRefusal: (refusal: EdgeRefusal) => void,
): void => {
  server.on("drop", (dropped) =>
    onRefusal({
      reason: "connection_limit",
      status: undefined,
      address: countedAddress(dropped?.remoteAddress),
      requestId: newRequestId(),
    }),
  )
}
