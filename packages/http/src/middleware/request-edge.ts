import type { RouterMiddleware } from "@koa/router"
import type { TrustedProxies } from "../request/client-address.js"
import type { Logger } from "../vocabulary/logger.js"
import { logAnswer, requestOutcome, routeLabel } from "../observability/access-log.js"
import type { MetricsRecorder } from "../observability/metrics.js"
import { nameRequest } from "../request/request-context.js"
import { targetFault } from "../request/request-target.js"
import { respondWithError } from "../vocabulary/api-error.js"
import type { RequestState } from "../vocabulary/request-state.js"
import type { RequestTracing } from "../vocabulary/tracing.js"
import { answerThrown } from "./error-handler.js"

/**
 * The outermost middleware, one function for what every request needs around its route: it
 * starts the request's span when the app traces, names the request (`X-Request-Id`), forbids
 * content sniffing, answers a target it cannot route with 400, turns anything thrown below into
 * the Error body, then logs and counts the final answer and ends the span with it. One layer
 * rather than three: each Koa layer is an async frame and a promise per request, and the three
 * this one replaced (request context, access log, error handler) were about a tenth of a create's
 * CPU on the in-memory store (205 µs a create with them, 182 without).
 */
export const requestEdge =
  (
    logger: Logger,
    metrics: MetricsRecorder,
    trustedProxies: TrustedProxies,
    tracing: RequestTracing | undefined,
  ): RouterMiddleware<RequestState> =>
  async (ctx, next) => {
    const started = performance.now()
    const span = tracing?.startRequest(ctx.req, ctx.protocol === "https" ? "https" : "http")
    nameRequest(ctx, logger, trustedProxies, span)
    // Every body is JSON (or the docs' own files): never let a browser guess another type.
    ctx.set("X-Content-Type-Options", "nosniff")
    const badTarget = targetFault(ctx)
    try {
      if (badTarget === undefined) await next()
      else respondWithError(ctx, badTarget)
    } catch (error) {
      answerThrown(ctx, error)
    }
    if (span === undefined) return logAnswer(ctx, logger, metrics, started)
    // The span is named as the access line names the route, and ended even if logging fails.
    const label = routeLabel(ctx)
    try {
      logAnswer(ctx, logger, metrics, started, label)
    } finally {
      span.end(requestOutcome(label, ctx.status))
    }
  }
