import type { ParameterizedContext } from "koa"
import { clientAddress, type TrustedProxies } from "../client-address.js"
import type { Logger } from "../logger.js"
import type { AuthState, Principal } from "../middleware/auth.js"
import { requestIdFor, requestIdHeader } from "./request-id.js"

/** What every request carries from the moment it reaches Koa. */
export interface RequestState {
  /** The client's acceptable `X-Request-Id`, or one made for the request. */
  readonly requestId: string
  /** The app's logger bound to `requestId`: every line about the request names it. */
  readonly log: Logger
  /** The client's address as the limits count it (see `clientAddress`). */
  readonly clientAddress: string
}

/**
 * A request's `ctx.state`. Its logger and client address are made on first use: at `warn` most
 * requests log nothing, and binding a pino child serializes its fields at once.
 */
class RequestScope implements RequestState, AuthState {
  principal?: Principal
  #log: Logger | undefined
  #clientAddress: string | undefined
  constructor(
    readonly requestId: string,
    private readonly logger: Logger,
    private readonly addressOf: () => string,
  ) {}
  get log(): Logger {
    this.#log ??= this.logger.child({ requestId: this.requestId })
    return this.#log
  }
  get clientAddress(): string {
    this.#clientAddress ??= this.addressOf()
    return this.#clientAddress
  }
}

/**
 * Names the request and echoes the name in `X-Request-Id`, set before anything else so that
 * every answer carries it, errors and 401s included.
 */
export const nameRequest = (
  ctx: ParameterizedContext<RequestState & AuthState>,
  logger: Logger,
  trustedProxies: TrustedProxies,
): void => {
  const requestId = requestIdFor(ctx.get(requestIdHeader))
  ctx.state = new RequestScope(requestId, logger, () => clientAddress(ctx.req, trustedProxies))
  ctx.set(requestIdHeader, requestId)
}
