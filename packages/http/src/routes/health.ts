import { respondWithError } from "../vocabulary/api-error.js"
import type { RouterContext } from "@koa/router"
import type { ApiRouter, RouteState } from "./router.js"
import { retryAfterSeconds } from "../vocabulary/headers.js"
import type { Logger } from "../vocabulary/logger.js"
import type { Readiness } from "../observability/readiness.js"
import {
  aliveBody,
  notReadyErrors,
  readyBody,
  type NotReadyReason,
} from "../observability/probe-answers.js"

/**
 * `GET /healthz`: the process is up (it never asks storage). Open to all, for load balancers and
 * orchestrators.
 */
export const registerHealthRoute = (router: ApiRouter): void => {
  router.get("/healthz", (ctx) => {
    ctx.body = aliveBody
  })
}

/** 503 with `Retry-After`: the status is what a balancer's probe needs, the code tells people why. */
const notReady = (ctx: RouterContext<RouteState>, reason: NotReadyReason): void => {
  ctx.set("Retry-After", String(retryAfterSeconds))
  respondWithError(ctx, notReadyErrors[reason])
}

/**
 * `GET /readyz`: storage answers too, else 503 `storage_unavailable` with `Retry-After`. Once
 * `stopping` is aborted (the process is shutting down), 503 `shutting_down` at once, storage
 * unasked: load balancers stop sending requests while the server still answers them. Open to
 * all, like `/healthz`.
 */
export const registerReadinessRoute = (
  router: ApiRouter,
  readiness: (log: Logger) => Promise<Readiness>,
  stopping?: AbortSignal,
): void => {
  router.get("/readyz", async (ctx) => {
    ctx.set("Cache-Control", "no-store")
    if (stopping?.aborted === true) {
      return notReady(ctx, "shutting_down")
    }
    const answer = await readiness(ctx.state.log)
    if (answer.ready) {
      ctx.body = readyBody
      return
    }
    notReady(ctx, "storage_unavailable")
  })
}
