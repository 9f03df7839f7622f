/**
 * An OTLP/HTTP receiver for the benchmark: it answers every export with success and keeps only
 * counts, so what tracing is measured to cost is the service's side (spans, batching, encoding,
 * sending), not a collector's.
 */
import { serveInProcess } from "./in-process-server.js"

export interface OtlpSink {
  /** `http://127.0.0.1:<port>`: what `OTEL_EXPORTER_OTLP_ENDPOINT` is set to. */
  readonly endpoint: string
  readonly exports: () => number
  readonly bytes: () => number
  readonly close: () => Promise<void>
}

export const startOtlpSink = async (): Promise<OtlpSink> => {
  let exports = 0
  let bytes = 0
  const server = await serveInProcess((request, response) => {
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length
    })
    request.on("end", () => {
      exports++
      // An empty ExportTraceServiceResponse in either encoding: nothing rejected.
      const json = request.headers["content-type"]?.startsWith("application/json") === true
      response.writeHead(200, {
        "Content-Type": json ? "application/json" : "application/x-protobuf",
      })
      response.end(json ? "{}" : "")
    })
  })
  return {
    endpoint: server.origin,
    exports: () => exports,
    bytes: () => bytes,
    close: server.close,
  }
}
