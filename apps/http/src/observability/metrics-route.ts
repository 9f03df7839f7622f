import type { ApiRouter } from "../api/api-router.js"
import type { Metrics } from "./metrics.js"

/** `GET /metrics`: the Prometheus text exposition, open to all like `/healthz`. */
export const registerMetricsRoute = (router: ApiRouter, metrics: Metrics): void => {
  router.get("/metrics", async (ctx) => {
    const text = await metrics.registry.metrics()
    ctx.set("Cache-Control", "no-store")
    ctx.type = metrics.registry.contentType
    ctx.body = text
  })
}
