import { closeSync, openSync, readSync } from "node:fs"
import { isIPv4, type AddressInfo } from "node:net"
import { endianness } from "node:os"

/** Linux's code for a listening socket in the `st` column. */
const listening = "0A"

/** Each read of the table; its listening sockets come first, usually all in the first read. */
const chunkBytes = 16 * 1024

/** The lines of the table as far as its listening sockets go: they come first. */
const listeningLines = (file: string): ReadonlyArray<string> => {
  const fd = openSync(file, "r")
  try {
    const buffer = Buffer.alloc(chunkBytes)
    let text = ""
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkBytes, null)
      text += buffer.toString("latin1", 0, read)
      const lines = text.split("\n").slice(1, read === 0 ? undefined : -1)
      const pastListeners = lines.some((line) => line.trim().split(/\s+/)[3] !== listening)
      if (read === 0 || pastListeners) return lines.filter((line) => line.trim() !== "")
    }
  } finally {
    closeSync(fd)
  }
}

/** The address as Linux prints it in /proc/net/tcp(6): each 32-bit word in the host's order. */
const procAddress = (address: string): string => {
  const bytes = isIPv4(address) ? ipv4Bytes(address) : ipv6Bytes(address)
  const words: Array<string> = []
  for (let at = 0; at < bytes.length; at += 4) {
    const word = bytes.subarray(at, at + 4)
    if (endianness() === "LE") word.reverse()
    words.push(word.toString("hex").toUpperCase())
  }
  return words.join("")
}

const ipv4Bytes = (address: string): Buffer => Buffer.from(address.split(".").map(Number))

const ipv6Bytes = (address: string): Buffer => {
  const [head = "", tail] = address.split("::")
  const groups = (part: string): Array<string> => (part === "" ? [] : part.split(":"))
  const dotted = (group: string): Array<string> => {
    if (!group.includes(".")) return [group]
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(group)
    return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)]
  }
  const left = groups(head).flatMap(dotted)
  const right = tail === undefined ? [] : groups(tail).flatMap(dotted)
  const all = [
    ...left,
    ...Array.from({ length: 8 - left.length - right.length }, () => "0"),
    ...right,
  ]
  return Buffer.from(all.map((group) => group.padStart(4, "0")).join(""), "hex")
}

/**
 * How many connections wait in the accept queue of the listening socket at `address` (those the
 * kernel has completed and the process has not accepted yet), as Linux tells it: the `rx_queue`
 * column of its line in /proc/net/tcp or /proc/net/tcp6. Undefined where that cannot be told
 * (another system, /proc unreadable, no line for it).
 */
export const acceptQueueLength = (address: AddressInfo): number | undefined => {
  const file = address.family === "IPv4" ? "/proc/net/tcp" : "/proc/net/tcp6"
  const local = `${procAddress(address.address)}:${address.port.toString(16).toUpperCase().padStart(4, "0")}`
  let lines: ReadonlyArray<string>
  try {
    lines = listeningLines(file)
  } catch {
    return undefined
  }
  // Several lines when other processes listen on the same address (SO_REUSEPORT): all counted.
  let waiting: number | undefined
  for (const line of lines) {
    const [, localAddress, , state, queues] = line.trim().split(/\s+/)
    if (localAddress !== local || state !== listening || queues === undefined) continue
    const queued = Number.parseInt(queues.split(":")[1] ?? "", 16)
    if (Number.isNaN(queued)) return undefined
    waiting = (waiting ?? 0) + queued
  }
  return waiting
}
