import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http"

export const postJson = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json" },
  body: JSON.stringify(body),
})

export interface Answer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface SendOptions {
  readonly method?: string
  /** Sent as they are; an array value becomes that many header lines. */
  readonly headers?: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** The source address, any of 127.0.0.0/8, so one test can be several clients. */
  readonly from?: string
  readonly body?: string
}

/** The whole of a response, read to its end. */
export const answerOf = async (response: IncomingMessage): Promise<Answer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of response) chunks.push(Buffer.from(chunk))
  return {
    status: response.statusCode ?? 0,
    headers: response.headers,
    body: Buffer.concat(chunks).toString("utf8"),
  }
}

/** A request to `origin` + `path` over a connection of its own, with nothing added. */
export const sendTo = (origin: string, path: string, options: SendOptions = {}) =>
  new Promise<Answer>((resolve, reject) => {
    const url = new URL(origin)
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: Number(url.port),
        path,
        method: options.method ?? "GET",
        localAddress: options.from ?? "127.0.0.1",
        agent: false,
      },
      (response) => resolve(answerOf(response)),
    )
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      outgoing.setHeader(name, typeof value === "string" ? value : [...value])
    }
    outgoing.on("error", reject)
    outgoing.end(options.body)
  })
