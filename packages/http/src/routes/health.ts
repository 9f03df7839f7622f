import { apiError, respondWithError } from "../vocabulary/api-error.js"
import type { ApiRouter } from "./router.js"
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

/**
 * `GET /readyz`: storage answers too, else 503 `storage_unavailable` with `Retry-After`. Open to
 * all, like `/healthz`.
 */
export const registerReadinessRoute = (
  router: ApiRouter,
  readiness: (log: Logger) => Promise<Readiness>,
): void => {
  router.get("/readyz", async (ctx) => {
    ctx.set("Cache-Control", "no-store")
    const answer = await readiness(ctx.state.log)
    if (answer.ready) {
      ctx.body = { status: "ready" }
      return
    }
    ctx.set("Retry-After", String(retryAfterSeconds))
    respondWithError(ctx, apiError("storage_unavailable", "storage is not answering; not ready"))
  })
}
