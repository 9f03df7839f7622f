import type { RouterMiddleware } from "@koa/router"
import type { Logger } from "../vocabulary/logger.js"
import type { MetricsRecorder } from "./metrics.js"
import type { RequestState } from "../vocabulary/request-state.js"
import { publicPath } from "../request/mount-path.js"

type ObservedState = RequestState
type RoutedContext = Parameters<RouterMiddleware<ObservedState>>[0]

/** What a path no route knows is logged and counted as: never the path itself. */
export const unmatchedRoute = "unmatched"

/** Which route answered: its template, and its operation id when it is an operation. */
export interface RouteLabel {
  readonly route: string
  readonly operation: string | undefined
}

/**
 * The route the router matched (path and method), else the template of a route that has the path
 * but not the method (a 405 or an OPTIONS), else `unmatched`. A template is written as the client
 * reaches it: under the app's mount path, if any (`/petstore/v1/pets`).
 */
export const routeLabel = (ctx: RoutedContext): RouteLabel => {
  if (ctx.routerPath !== undefined) {
    return { route: publicPath(ctx, ctx.routerPath), operation: ctx.routerName }
  }
  const byPath = ctx.matched?.find((layer) => layer.methods.length > 0)?.path
  return {
    route: typeof byPath === "string" ? publicPath(ctx, byPath) : unmatchedRoute,
    operation: undefined,
  }
}

const milliseconds = (since: number) => Math.round((performance.now() - since) * 1000) / 1000

/**
 * Once the final status is known: one `info` line per request (method, route template, status,
 * duration, request id, the key's id when one was admitted, the client address the limits count) and one observation of the request
 * duration histogram. Never the path as sent, a header or a key.
 */
export const logAnswer = (
  ctx: RoutedContext,
  logger: Logger,
  metrics: MetricsRecorder,
  started: number,
): void => {
  const durationMs = milliseconds(started)
  const { route, operation } = routeLabel(ctx)
  metrics.observeRequest(operation ?? route, ctx.status, durationMs / 1000)
  // Written by the app's logger with the request id first: the line the request's own child
  // logger would write, without binding one for every request.
  if (logger.isLevelEnabled("info")) {
    logger.info(
      {
        requestId: ctx.state.requestId,
        method: ctx.method,
        route,
        operation,
        status: ctx.status,
        durationMs,
        keyId: ctx.state.principal?.keyId,
        address: ctx.state.clientAddress,
      },
      "request",
    )
  }
}
