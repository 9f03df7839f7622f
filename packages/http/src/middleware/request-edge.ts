import type { RouterMiddleware } from "@koa/router"
import type { TrustedProxies } from "../request/client-address.js"
import type { Logger } from "../vocabulary/logger.js"
import { logAnswer } from "../observability/access-log.js"
import type { MetricsRecorder } from "../observability/metrics.js"
import { nameRequest } from "../request/request-context.js"
import type { RequestState } from "../vocabulary/request-state.js"
import { answerThrown } from "./error-handler.js"

/**
 * The outermost middleware, one function for what every request needs around its route: it
 * names the request (`X-Request-Id`), forbids content sniffing, turns anything thrown below into
 * the Error body, then logs and counts the final answer. One layer rather than three: each Koa
 * layer is an async frame and a promise per request (tools/bench/RESULTS.md).
 */
export const requestEdge =
  (
    logger: Logger,
    metrics: MetricsRecorder,
    trustedProxies: TrustedProxies,
  ): RouterMiddleware<RequestState> =>
  async (ctx, next) => {
    const started = performance.now()
    nameRequest(ctx, logger, trustedProxies)
    // Every body is JSON (or the docs' own files): never let a browser guess another type.
    ctx.set("X-Content-Type-Options", "nosniff")
    try {
      await next()
    } catch (error) {
      answerThrown(ctx, error)
    }
    logAnswer(ctx, logger, metrics, started)
  }
