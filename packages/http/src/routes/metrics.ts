import type { ApiRouter } from "./router.js"
import type { MetricsExposition } from "../observability/metrics-exposition.js"

/** `GET /metrics`: the Prometheus text exposition, open to all like `/healthz`. */
export const registerMetricsRoute = (router: ApiRouter, exposition: MetricsExposition): void => {
  router.get("/metrics", async (ctx) => {
    const text = await exposition.render()
    ctx.set("Cache-Control", "no-store")
    ctx.type = exposition.contentType
    ctx.body = text
  })
}
