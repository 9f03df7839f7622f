import { closeSync, constants, fstatSync, openSync } from "node:fs"
import { Socket } from "node:net"
import type { Writable } from "node:stream"
import { setTimeout as sleep } from "node:timers/promises"

/** Where pino writes one line at a time; it never blocks and never retries. */
export interface LineDestination {
  readonly write: (line: string) => void
  /**
   * Resolves once the lines written so far have been handed to the system, or after `ms`,
   * whichever comes first: a reader that stalls or is gone delays it by `ms` at most.
   */
  readonly flush: (ms: number) => Promise<void>
}

export interface LineDestinationOptions {
  /** How many bytes may wait in the process for a slow reader; a line past them is dropped. */
  readonly maxWaitingBytes: number
  /** Called for every line dropped: past `maxWaitingBytes`, or after the stream failed. */
  readonly onDrop: () => void
}

const flushPollMs = 10

/**
 * Lines to a stream, such as `standardStream`'s: on a pipe or socket Node writes without blocking
 * (libuv waits until the reader makes room, instead of retrying or sleeping), and the bytes it
 * holds meanwhile are the stream's `writableLength`. A reader that falls behind costs at most
 * `maxWaitingBytes` of memory: later lines are dropped. Once the stream fails (EPIPE: the reader
 * is gone), every line is dropped; nothing is retried.
 */
export const lineDestination = (
  stream: Writable,
  options: LineDestinationOptions,
): LineDestination => {
  let failed = false
  // Also what keeps an EPIPE from crashing the process as an unhandled 'error'.
  stream.on("error", () => {
    failed = true
  })
  const usable = () => !failed && stream.writable
  return {
    write: (line) => {
      if (usable() && stream.writableLength < options.maxWaitingBytes) {
        stream.write(line)
      } else {
        options.onDrop()
      }
    },
    flush: async (ms) => {
      const deadline = performance.now() + ms
      while (usable() && stream.writableLength > 0 && performance.now() < deadline) {
        await sleep(flushPollMs)
      }
    },
  }
}

const descriptors = { stdout: 1, stderr: 2 } as const

/**
 * The process's stdout or stderr, to write lines to without ever blocking. A pipe (as Docker,
 * Kubernetes and shell pipelines give) is opened anew through Linux's `/proc/self/fd`, in
 * non-blocking mode: on the inherited one, any process sharing it (the parent, a child given our
 * stderr) may set blocking mode back, after which a write to a full pipe stops the event loop and
 * nothing can end the process but SIGKILL. Anything else (a file, a terminal, a socket), or a pipe
 * that cannot be opened so, is Node's own `process.stdout` or `process.stderr`.
 */
export const standardStream = (name: keyof typeof descriptors): Writable => {
  const inherited = name === "stdout" ? process.stdout : process.stderr
  const fd = descriptors[name]
  let own: number | undefined
  try {
    if (!fstatSync(fd).isFIFO()) return inherited
    own = openSync(`/proc/self/fd/${fd}`, constants.O_WRONLY | constants.O_NONBLOCK)
    const stream = new Socket({ fd: own, readable: false, writable: true })
    // Lines still waiting for a stalled reader must not keep a process alive.
    stream.unref()
    return stream
  } catch {
    if (own !== undefined) closeSync(own)
    return inherited
  }
}
