import { createServer, request as httpRequest, type Server } from "node:http"
import { bodyParser } from "@koa/bodyparser"
import Router from "@koa/router"
import { MemoryPetRepository } from "@petstore/storage"
import { ManagedRuntime } from "effect"
import Koa from "koa"
import mount from "koa-mount"
import { createApp, createLogger, type AppOptions } from "../../src/index.js"

export const apiKey = "mount-test-key-0123456789"
export const mountPath = "/petstore"
/** Every exchange of these tests is over well before this; a request that hangs fails. */
export const answerWithinMs = 3_000

export interface Served {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly close: () => Promise<void>
}

/** `handler` on a real HTTP server on an ephemeral port of 127.0.0.1. */
export const serve = async (handler: ReturnType<Koa["callback"]>): Promise<Served> => {
  const server: Server = createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

export interface LoggedRequest {
  readonly message: string
  readonly route?: string
  readonly status?: number
}

export interface PetstoreApp {
  readonly app: ReturnType<typeof createApp>
  readonly logged: ReadonlyArray<LoggedRequest>
  readonly dispose: () => Promise<void>
}

/** The Petstore app on in-memory storage, its access log kept for the test. */
export const petstoreApp = (options: Partial<Omit<AppOptions, "runtime">> = {}): PetstoreApp => {
  const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
  const logged: Array<LoggedRequest> = []
  const logger = createLogger("info", {
    write: (line: string) => {
      const parsed: unknown = JSON.parse(line)
      if (typeof parsed === "object" && parsed !== null && "message" in parsed) {
        logged.push({
          message: String(parsed.message),
          ...("route" in parsed && typeof parsed.route === "string" ? { route: parsed.route } : {}),
          ...("status" in parsed && typeof parsed.status === "number"
            ? { status: parsed.status }
            : {}),
        })
      }
    },
  })
  const app = createApp({ apiKeys: [apiKey], logger, metrics: false, ...options, runtime })
  return { app, logged, dispose: () => runtime.dispose() }
}

export interface HostOptions {
  /**
   * What the host runs before anything else; @koa/bodyparser app-wide unless given (with a JSON
   * limit above the app's 1 MiB, so that the app's own limit is the one a large body meets).
   */
  readonly bodyMiddleware?: Koa.Middleware
  /** Where the Petstore is mounted: after the host's body parser (the default) or before it. */
  readonly petstoreFirst?: boolean
}

/**
 * A host Koa app of its own: a body parser app-wide, its own `/healthz` and `/docs`, and the
 * Petstore app mounted at `/petstore` with koa-mount.
 */
export const hostApp = (petstore: Koa.Middleware, options: HostOptions = {}): Koa => {
  const host = new Koa()
  host.silent = true
  if (options.petstoreFirst === true) host.use(petstore)
  host.use(options.bodyMiddleware ?? bodyParser({ jsonLimit: "2mb" }))
  const hostRoutes = new Router()
  hostRoutes.get("/healthz", (ctx) => {
    ctx.body = "the host's own health"
  })
  hostRoutes.get("/docs", (ctx) => {
    ctx.body = "the host's own docs"
  })
  host.use(hostRoutes.routes())
  if (options.petstoreFirst !== true) host.use(petstore)
  return host
}

export const mounted = (app: PetstoreApp["app"]): Koa.Middleware => mount(mountPath, app)

export interface Exchange {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: () => unknown
}

/** A request by fetch, which fails when no answer arrives within `answerWithinMs`. */
export const get = async (url: string, headers: Record<string, string> = {}): Promise<Exchange> => {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(answerWithinMs) })
  const text = await response.text()
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: () => JSON.parse(text),
  }
}

export const authorized = { Authorization: `Bearer ${apiKey}` }

export interface PostOptions {
  readonly contentType?: string
  /** Sent instead of the key's `Authorization` when given (`{}`: no key). */
  readonly headers?: Readonly<Record<string, string>>
  /** Sent chunked, without `Content-Length`, when true. */
  readonly chunked?: boolean
}

/**
 * `POST` of `body` with the key, by node:http so that the framing is the test's to choose. It
 * fails when no answer arrives within `answerWithinMs`.
 */
export const post = (url: string, body: string, options: PostOptions = {}): Promise<Exchange> =>
  new Promise((resolve, reject) => {
    const bytes = Buffer.from(body)
    const request = httpRequest(url, {
      method: "POST",
      headers: {
        ...(options.headers ?? authorized),
        "Content-Type": options.contentType ?? "application/json",
        ...(options.chunked === true ? {} : { "Content-Length": String(bytes.length) }),
      },
      timeout: answerWithinMs,
    })
    request.on("timeout", () => {
      request.destroy(new Error(`no answer to POST ${url} within ${answerWithinMs} ms`))
    })
    request.on("error", reject)
    request.on("response", (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("error", reject)
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        const headers = new Headers()
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === "string") headers.set(name, value)
          else if (Array.isArray(value)) for (const each of value) headers.append(name, each)
        }
        resolve({ status: response.statusCode ?? 0, headers, text, json: () => JSON.parse(text) })
      })
    })
    // Written before the end, so that Node cannot count it into a `Content-Length` of its own.
    if (options.chunked === true) request.write(bytes)
    request.end(options.chunked === true ? undefined : bytes)
  })

/** `<…>; rel="…"` of a `Link` header: the URI and the relation. */
export const linkOf = (header: string | null): { readonly uri: string; readonly rel: string } => {
  const match = /^<([^>]*)>; rel="([^"]+)"$/.exec(header ?? "")
  return { uri: match?.[1] ?? "", rel: match?.[2] ?? "" }
}
