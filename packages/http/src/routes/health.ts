import { apiError, respondWithError } from "../vocabulary/api-error.js"
import type { RouterContext } from "@koa/router"
import type { ApiRouter, RouteState } from "./router.js"
import { retryAfterSeconds } from "../vocabulary/headers.js"
import type { Logger } from "../vocabulary/logger.js"
import type { Readiness } from "../observability/readiness.js"

/**
 * `GET /healthz`: the process is up (it never asks storage). Open to all, for load balancers and
 * orchestrators.
 */
export const registerHealthRoute = (router: ApiRouter): void => {
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" }
  })
}

/** 503 with `Retry-After`: the status is what a balancer's probe needs, the code tells people why. */
const notReady = (
  ctx: RouterContext<RouteState>,
  code: "storage_unavailable" | "shutting_down",
  message: string,
): void => {
  ctx.set("Retry-After", String(retryAfterSeconds))
  respondWithError(ctx, apiError(code, message))
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
      return notReady(ctx, "shutting_down", "shutting down; not ready")
    }
    const answer = await readiness(ctx.state.log)
    if (answer.ready) {
      ctx.body = { status: "ready" }
      return
    }
    notReady(ctx, "storage_unavailable", "storage is not answering; not ready")
  })
}
