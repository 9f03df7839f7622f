/**
 * Baseline (b): the Koa baseline as a competent team operates it: the same routes and checks,
 * plus the per-request work the service does, written by hand the usual way: a request id
 * (the client's `X-Request-Id` when acceptable, else a UUID), `nosniff` on every answer and
 * `no-store` on every keyed one, API keys compared in constant time, a prom-client histogram of
 * request durations, and a pino access line per request (at `PETSTORE_LOG_LEVEL=warn`, as
 * benchmarked, nothing is written, but the call is made).
 *
 * That work is written here, not borrowed from `@petstore/http` (its request ids, metrics and
 * logger): the "≤ 0.8× Koa as operated" target asks what the service costs against a team's own
 * Koa app doing the same things, and with the service's pieces inside it this baseline would be
 * the service without Effect instead.
 *
 *   PORT=8081 PETSTORE_API_KEYS=key PETSTORE_LOG_LEVEL=warn node --import tsx baselines/koa-operated.ts
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto"
import Router from "@koa/router"
import type { Middleware } from "koa"
import { pino } from "pino"
import { Histogram, Registry } from "prom-client"
import { serveKoaPetstore } from "./koa-app.js"
import { apiKeys } from "./pet-store.js"

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

const metrics = new Router()
metrics.get("/metrics", async (ctx) => {
  ctx.set("Content-Type", registry.contentType)
  ctx.body = await registry.metrics()
})

serveKoaPetstore({
  isKey,
  onError: (error) => logger.error({ error }, "request failed"),
  around: [operated],
  extraRoutes: metrics,
})
