/**
 * Baseline (b): the Koa baseline as a competent team operates it: the same routes and checks,
 * plus the per-request work the service does, written by hand the usual way: a request id
 * (the client's `X-Request-Id` when acceptable, else a UUID), `nosniff` on every answer and
 * `no-store` on every keyed one, API keys compared in constant time, a prom-client histogram of
 * request durations, and a pino access line per request (at `PETSTORE_LOG_LEVEL=warn`, as
 * benchmarked, nothing is written, but the call is made).
 *
 *   PORT=8081 PETSTORE_API_KEYS=key PETSTORE_LOG_LEVEL=warn node --import tsx baselines/koa-operated.ts
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import Router from "@koa/router"
import Koa, { type Middleware } from "koa"
import { pino } from "pino"
import { Histogram, Registry } from "prom-client"
import {
  announce,
  apiKeys,
  checkListQuery,
  checkNewPet,
  deprecationHeaders,
  errorBody,
  invalidPetId,
  isErrorBody,
  listenAddress,
  nextLink,
  parseJson,
  parsePetId,
  petNotFound,
  readBody,
  refuseBodyHeaders,
  refuseKey,
  seededStore,
  type ErrorBody,
} from "./pet-store.js"

const store = seededStore()
const logger = pino({ level: process.env["PETSTORE_LOG_LEVEL"] ?? "info" })
const registry = new Registry()
const requestDuration = new Histogram({
  name: "http_request_duration_seconds",
  help: "Time to answer a request, by route and status.",
  labelNames: ["method", "route", "status"] as const,
  registers: [registry],
})

const digest = (text: string) => createHash("sha256").update(text).digest()
const keyDigests = [...apiKeys()].map(digest)
/** Whether `token` is a key, compared in constant time against every key. */
const isKey = (token: string): boolean => {
  const presented = digest(token)
  let found = false
  for (const key of keyDigests) found = timingSafeEqual(presented, key) || found
  return found
}

const acceptableRequestId = /^[A-Za-z0-9._-]{1,128}$/

const fail = (ctx: Koa.Context, error: ErrorBody) => {
  ctx.status = error.status
  ctx.body = error
}

/** Answers 401 and true when the request bears no known key. */
const refused = (ctx: Koa.Context): boolean => {
  const refusal = refuseKey(ctx.get("Authorization"), isKey)
  if (refusal === undefined) return false
  ctx.set("WWW-Authenticate", refusal.challenge)
  fail(ctx, refusal.body)
  return true
}

const auth: Middleware = async (ctx, next) => {
  if (refused(ctx)) return
  ctx.set("Cache-Control", "no-store")
  await next()
}

/** The request id, `nosniff`, the duration histogram and the access line, around everything. */
const operated: Middleware = async (ctx, next) => {
  const started = performance.now()
  const sent = ctx.get("X-Request-Id")
  const requestId = acceptableRequestId.test(sent) ? sent : randomUUID()
  ctx.set("X-Request-Id", requestId)
  ctx.set("X-Content-Type-Options", "nosniff")
  await next()
  const seconds = (performance.now() - started) / 1000
  const route = ctx.routerPath ?? "unmatched"
  requestDuration.observe({ method: ctx.method, route, status: ctx.status }, seconds)
  logger.info(
    { requestId, method: ctx.method, route, status: ctx.status, durationMs: seconds * 1000 },
    "request",
  )
}

/** Every failure, and the router's empty 404 and 405, as the JSON Error body. */
const jsonErrors: Middleware = async (ctx, next) => {
  try {
    await next()
  } catch (error) {
    logger.error({ error }, "request failed")
    return fail(ctx, errorBody(500, "internal_error", "an unexpected error occurred"))
  }
  if (ctx.body !== undefined && ctx.body !== null) return
  if (refused(ctx)) return
  ctx.set("Cache-Control", "no-store")
  if (ctx.status === 405)
    fail(ctx, errorBody(405, "method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}`))
  else fail(ctx, errorBody(404, "not_found", `nothing is at ${ctx.path}`))
}

const deprecated: Middleware = async (ctx, next) => {
  ctx.set(deprecationHeaders)
  await next()
}

const router = new Router({ prefix: "/v1", strict: true, sensitive: true })

router.get("/pets", auth, (ctx) => {
  const query = checkListQuery({
    limit: ctx.query["limit"],
    status: ctx.query["status"],
    cursor: ctx.query["cursor"],
  })
  if (isErrorBody(query)) return fail(ctx, query)
  const page = store.list(query.limit, query.status, query.afterId)
  if (page.next !== undefined) ctx.set("Link", nextLink(query.limit, query.status, page.next))
  ctx.body = page.pets
})

router.post("/pets", auth, async (ctx) => {
  const refused = refuseBodyHeaders(ctx.req)
  if (refused !== undefined) return fail(ctx, refused)
  const text = await readBody(ctx.req)
  if (typeof text !== "string") return fail(ctx, text)
  const parsed = parseJson(text)
  if (isErrorBody(parsed)) return fail(ctx, parsed)
  const newPet = checkNewPet(parsed.value)
  if (isErrorBody(newPet)) return fail(ctx, newPet)
  const pet = store.create(newPet)
  ctx.status = 201
  ctx.set("Location", `/v1/pets/${pet.id}`)
  ctx.body = pet
})

router.get("/pets/:petId", deprecated, auth, (ctx) => {
  const text = ctx.params["petId"] ?? ""
  const id = parsePetId(text)
  if (id === undefined) return fail(ctx, invalidPetId(text))
  const pet = store.find(id)
  if (pet === undefined) return fail(ctx, petNotFound(id))
  ctx.body = pet
})

const metrics = new Router()
metrics.get("/metrics", async (ctx) => {
  ctx.set("Content-Type", registry.contentType)
  ctx.body = await registry.metrics()
})

const app = new Koa()
app.use(operated)
app.use(jsonErrors)
app.use(metrics.routes())
app.use(router.routes())
app.use(router.allowedMethods())

const { port, host } = listenAddress()
const server = app.listen(port, host, () => {
  const address = server.address()
  announce(typeof address === "object" && address !== null ? address.port : port, host)
})
