import type { ParameterizedContext } from "koa"
import type { Logger } from "../logger.js"
import type { AuthState, Principal } from "../middleware/auth.js"
import { requestIdFor, requestIdHeader } from "./request-id.js"

/** What every request carries from the moment it reaches Koa. */
export interface RequestState {
  /** The client's acceptable `X-Request-Id`, or one made for the request. */
  readonly requestId: string
  /** The app's logger bound to `requestId`: every line about the request names it. */
  readonly log: Logger
}

/**
 * A request's `ctx.state`. Its logger is made on first use: at `warn` most requests log nothing,
 * and binding a pino child serializes its fields at once.
 */
class RequestScope implements RequestState, AuthState {
  principal?: Principal
  #log: Logger | undefined
  constructor(
    readonly requestId: string,
    private readonly logger: Logger,
  ) {}
  get log(): Logger {
    this.#log ??= this.logger.child({ requestId: this.requestId })
    return this.#log
  }
}

/**
 * Names the request and echoes the name in `X-Request-Id`, set before anything else so that
 * every answer carries it, errors and 401s included.
 */
export const nameRequest = (
  ctx: ParameterizedContext<RequestState & AuthState>,
  logger: Logger,
): void => {
  const requestId = requestIdFor(ctx.get(requestIdHeader))
  ctx.state = new RequestScope(requestId, logger)
  ctx.set(requestIdHeader, requestId)
}
