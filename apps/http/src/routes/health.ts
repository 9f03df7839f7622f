import Router from "@koa/router"

/** `GET /healthz`: open to all, for load balancers and orchestrators. */
export const healthRoutes = () => {
  const router = new Router()
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" }
  })
  return router
}
