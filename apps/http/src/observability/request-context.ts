import type { Middleware } from "koa"
import type { Logger } from "../logger.js"
import { requestIdFor, requestIdHeader } from "./request-id.js"

/** What every request carries from the moment it reaches Koa. */
export interface RequestState {
  /** The client's acceptable `X-Request-Id`, or one made for the request. */
  requestId: string
  /** The app's logger bound to `requestId`: every line about the request names it. */
  log: Logger
}

/**
 * First middleware: names the request and echoes the name in `X-Request-Id`, set before anything
 * else so that every answer carries it, errors and 401s included.
 */
export const requestContext =
  (logger: Logger): Middleware<RequestState> =>
  async (ctx, next) => {
    const requestId = requestIdFor(ctx.get(requestIdHeader))
    ctx.state.requestId = requestId
    ctx.state.log = logger.child({ requestId })
    ctx.set(requestIdHeader, requestId)
    await next()
  }
