import type { RouterMiddleware } from "@koa/router"
import type { Logger } from "../vocabulary/logger.js"
import type { MetricsRecorder } from "./metrics.js"
import type { RequestState } from "../vocabulary/request-state.js"
import { publicPath } from "../request/mount-path.js"
import type { RequestOutcome } from "../vocabulary/tracing.js"

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

/** `/v1/pets/:petId` as OpenAPI and OpenTelemetry write a template: `/v1/pets/{petId}`. */
const templateOf = (routerPath: string): string =>
  routerPath.includes(":") ? routerPath.replace(/:(\w+)/g, "{$1}") : routerPath

/** What a request's span is told as it ends: the route of its access line, as a template. */
export const requestOutcome = (label: RouteLabel, status: number): RequestOutcome => ({
  route: label.route === unmatchedRoute ? undefined : templateOf(label.route),
  operation: label.operation,
  status,
})

const milliseconds = (since: number) => Math.round((performance.now() - since) * 1000) / 1000

/**
 * Once the final status is known: one `info` line per request (method, route template, status,
 * duration, request id, the key's id when one was admitted, the client address the limits
 * count, and when traced the trace and span ids) and one observation of the request duration
 * histogram. Never the path as sent, a header or a key.
 */
export const logAnswer = (
  ctx: RoutedContext,
  logger: Logger,
  metrics: MetricsRecorder,
  started: number,
  label: RouteLabel = routeLabel(ctx),
): void => {
  const durationMs = milliseconds(started)
  const { route, operation } = label
  metrics.observeRequest(operation ?? route, ctx.status, durationMs / 1000)
  // Written by the app's logger with the request id first: the line the request's own child
  // logger would write, without binding one for every request.
  if (logger.isLevelEnabled("info")) {
    const line = {
      requestId: ctx.state.requestId,
      method: ctx.method,
      route,
      operation,
      status: ctx.status,
      durationMs,
      keyId: ctx.state.principal?.keyId,
      address: ctx.state.clientAddress,
    }
    const span = ctx.state.span
    logger.info(
      span === undefined ? line : { ...line, trace_id: span.traceId, span_id: span.spanId },
      "request",
    )
  }
}
