import assert from "node:assert/strict"
import { randomBytes } from "node:crypto"
import { once } from "node:events"
import { createServer, connect, type Socket } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { postJson } from "@petstore/test-support/requests"
import { parseLogLine, type LogLine } from "@petstore/test-support/log-capture"
import {
  attribute,
  type AttributeValue,
  type OtlpReceiver,
  type ReceivedSpan,
} from "./otlp-receiver.js"
import { startServerProcess, type RunningServer } from "./server-process.js"

/** A key no span may carry, long and distinctive enough to be found anywhere it leaks. */
export const tracingApiKey = "tracing-test-key-5f0c2e9a7b1d4e36"

/** A pet id that is never created: a path carrying it answers 404, and no span may name it. */
export const missingPetId = 987_654_321

/** A server process on `storage` exporting to `receiver`, with exports every 50 ms. */
export const startTracedServer = (
  storage: string,
  receiver: OtlpReceiver,
  env: Readonly<Record<string, string>> = {},
): Promise<RunningServer> =>
  startServerProcess({
    storage,
    apiKeys: [tracingApiKey],
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: "50",
      ...env,
    },
  })

/** A caller's span, as a W3C `traceparent` names it (sampled). */
export interface Caller {
  readonly traceId: string
  readonly spanId: string
  readonly traceparent: string
}

export const newCaller = (): Caller => {
  const traceId = randomBytes(16).toString("hex")
  const spanId = randomBytes(8).toString("hex")
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

export const createPetRequest = (name: string, headers: Record<string, string> = {}) => {
  const init = postJson({ name, categoryId: 3, status: "available" })
  return { ...init, headers: { "Content-Type": "application/json", ...headers } }
}

/** The SERVER span of the request answered with this `X-Request-Id`'s trace. */
export const serverSpanOf = (
  spans: ReadonlyArray<ReceivedSpan>,
  traceId: string,
): ReceivedSpan | undefined =>
  spans.find((span) => span.traceId === traceId && span.kind === "SERVER")

/**
 * The request's access line, once the server has written it: the line goes through the
 * process's non-blocking logger and a pipe, so it may arrive after the response.
 */
export const accessLine = async (
  server: RunningServer,
  requestId: string,
  timeoutMs = 5_000,
): Promise<LogLine> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const line = server
      .stdout()
      .split("\n")
      .filter((text) => text.startsWith("{"))
      .map(parseLogLine)
      .find((parsed) => parsed["message"] === "request" && parsed["requestId"] === requestId)
    if (line !== undefined) return line
    assert.ok(Date.now() < deadline, `no access line for ${requestId} after ${timeoutMs} ms`)
    await sleep(10)
  }
}

/** Resolves with the server span of `traceId` once the receiver has it and its whole subtree. */
export const waitForTrace = async (
  receiver: OtlpReceiver,
  traceId: string,
  spanCount: number,
): Promise<ReadonlyArray<ReceivedSpan>> => {
  const spans = await receiver.waitForSpans(
    (seen) => seen.filter((span) => span.traceId === traceId).length >= spanCount,
    10_000,
  )
  return spans.filter((span) => span.traceId === traceId)
}

const asText = (value: AttributeValue): string =>
  Array.isArray(value) ? value.map(asText).join(",") : String(value)

/**
 * Every text a trace backend keeps of these spans: names, attribute values (the spans', their
 * events' and links'), status messages and the resource.
 */
export const spanTexts = (spans: ReadonlyArray<ReceivedSpan>): ReadonlyArray<string> =>
  spans.flatMap((span) => [
    span.name,
    span.status.message ?? "",
    ...Object.values(span.attributes).map(asText),
    ...span.events.flatMap((event) => [event.name, ...Object.values(event.attributes).map(asText)]),
    ...span.links.flatMap((link) => Object.values(link.attributes).map(asText)),
    ...Object.values(span.resource).map(asText),
  ])

/** Fails naming the span text that holds one of `secrets`. */
export const assertNoneCarries = (
  spans: ReadonlyArray<ReceivedSpan>,
  secrets: ReadonlyArray<string>,
) => {
  for (const text of spanTexts(spans)) {
    for (const secret of secrets) {
      assert.ok(!text.includes(secret), `a span carries ${JSON.stringify(secret)}: ${text}`)
    }
  }
}

/** The attribute as a number, whether the encoding made it a bigint or not. */
export const numberAttribute = (span: ReceivedSpan, name: string): number | undefined => {
  const value = attribute(span, name)
  return typeof value === "bigint" || typeof value === "number" ? Number(value) : undefined
}

/** Resolves once `check` holds, polling; rejects after `ms`. */
export const eventually = async (check: () => boolean, ms: number, what: string) => {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not after ${ms} ms: ${what}`)
    await sleep(25)
  }
}

/** A collector that hangs until `recover`, in front of a receiver: a TCP relay to it. */
export interface HangingCollector {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  /** From now on, connections reach the receiver; those held so far stay held. */
  readonly recover: () => void
  readonly close: () => Promise<void>
}

export const hangingCollector = async (receiver: OtlpReceiver): Promise<HangingCollector> => {
  const target = Number(new URL(receiver.url).port)
  const sockets = new Set<Socket>()
  let answering = false
  const relay = createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => socket.destroy())
    // Held: the bytes are read, and nothing ever comes back.
    if (!answering) return void socket.resume()
    const upstream = connect(target, "127.0.0.1")
    sockets.add(upstream)
    upstream.on("close", () => sockets.delete(upstream))
    upstream.on("error", () => socket.destroy())
    socket.on("close", () => upstream.destroy())
    socket.pipe(upstream).pipe(socket)
  })
  relay.listen(0, "127.0.0.1")
  await once(relay, "listening")
  const address = relay.address()
  assert.ok(address !== null && typeof address !== "string")
  return {
    url: `http://127.0.0.1:${address.port}`,
    recover: () => {
      answering = true
    },
    close: async () => {
      const closed = once(relay, "close")
      relay.close()
      sockets.forEach((socket) => socket.destroy())
      await closed
    },
  }
}
