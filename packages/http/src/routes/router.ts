import Router, { type RouterContext, type RouterMiddleware } from "@koa/router"
import { Option } from "effect"
import { apiError, jsonContentType, respondWithError } from "../vocabulary/api-error.js"
import { readJsonBody } from "../body/json-body.js"
import { deprecationHeadersOf } from "../middleware/deprecation-headers.js"
import { publicPath } from "../request/mount-path.js"
import type { RequestState } from "../vocabulary/request-state.js"
import type { Edge, ServedOperation } from "../operations/serve-operation.js"

/** What a route finds in `ctx.state`: the request's id and logger, and who sent it. */
export type RouteState = RequestState
export type ApiRouter = Router<RouteState>
export type RouteMiddleware = RouterMiddleware<RouteState>

/**
 * One router decides what every path means: paths match exactly as written (case-sensitive,
 * a trailing slash significant, nothing decoded), so the route that runs, the key it demands
 * and the headers it sets are all decided by one matcher. Public routes are registered on it too.
 */
export const createRouter = (): ApiRouter =>
  new Router<RouteState>({ sensitive: true, strict: true })

/** `/pets/{petId}` as the router writes it: `/pets/:petId`. */
export const routerPath = (template: string): string => template.replace(/\{(\w+)\}/g, ":$1")

const answer =
  (operation: ServedOperation, edge: Edge): RouteMiddleware =>
  async (ctx) => {
    const reply = await operation.handle(
      {
        principal: Option.fromNullable(ctx.state.principal),
        basePath: publicPath(ctx, edge.basePath),
        log: () => ctx.state.log,
        rawHeaders: ctx.req.rawHeaders,
        params: ctx.params,
        querystring: ctx.querystring,
        query: () => ctx.query,
        readBody: () => readJsonBody(ctx),
        span: ctx.state.span,
      },
      edge,
    )
    ctx.status = reply.status
    ctx.set(reply.headers)
    if (reply.json === undefined) return
    // Set as Koa would for a JSON body, without its media-type lookup on every response.
    ctx.set("Content-Type", jsonContentType)
    ctx.body = reply.json
  }

/**
 * Registers each operation at `{basePath}{path}` for its method (and HEAD with GET): its
 * deprecation headers first, then the key check when it needs one, then the operation.
 */
export const registerOperations = (
  router: ApiRouter,
  operations: ReadonlyArray<ServedOperation>,
  edge: Edge,
  requireKey: RouteMiddleware,
): void => {
  for (const operation of operations) {
    const chain: Array<RouteMiddleware> = [
      ...Option.match(operation.deprecation, {
        onNone: () => [],
        onSome: (notice) => [deprecationHeadersOf(notice, edge.basePath)],
      }),
      ...(operation.requiresKey ? [requireKey] : []),
      answer(operation, edge),
    ]
    router.register(`${edge.basePath}${routerPath(operation.path)}`, [operation.method], chain, {
      name: operation.id,
    })
  }
}

/** The methods a path allows, as `Allow` lists them: its routes' methods, then OPTIONS. */
const allowedMethods = (ctx: RouterContext<RouteState>): ReadonlyArray<string> => {
  const methods = new Set((ctx.matched ?? []).flatMap((layer) => layer.methods))
  if (methods.size > 0) methods.add("OPTIONS")
  return [...methods]
}

const answerUnrouted = (ctx: RouterContext<RouteState>) => {
  const allowed = allowedMethods(ctx)
  if (allowed.length === 0) {
    return respondWithError(
      ctx,
      apiError("not_found", `nothing is at ${publicPath(ctx, ctx.path)}`),
    )
  }
  ctx.set("Allow", allowed.join(", "))
  if (ctx.method === "OPTIONS") {
    ctx.status = 204
    return
  }
  respondWithError(
    ctx,
    apiError(
      "method_not_allowed",
      `${ctx.method} is not allowed on ${publicPath(ctx, ctx.path)}; allowed: ${allowed.join(", ")}`,
    ),
  )
}

/**
 * What runs when no route matched both the path and the method. An unknown path, or a known
 * one whose routes need a key, needs a key first: without one the answer is 401, so an
 * unauthenticated caller learns nothing of which paths exist. Then an unknown path is 404,
 * OPTIONS is 204 with `Allow`, and any other method 405 with `Allow`.
 */
export const unrouted =
  (protectedRoutes: ReadonlySet<string>, requireKey: RouteMiddleware): RouteMiddleware =>
  async (ctx) => {
    const matched = ctx.matched ?? []
    const guarded =
      matched.length === 0 || matched.some((layer) => protectedRoutes.has(layer.name ?? ""))
    if (!guarded) return answerUnrouted(ctx)
    await requireKey(ctx, async () => answerUnrouted(ctx))
  }
