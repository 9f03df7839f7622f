import type { ApiRouter } from "../api/api-router.js"

/** `GET /healthz`: open to all, for load balancers and orchestrators. */
export const registerHealthRoutes = (router: ApiRouter): void => {
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" }
  })
}
