import type { ParameterizedContext } from "koa"
import { clientAddress, type TrustedProxies } from "./client-address.js"
import type { Logger } from "../vocabulary/logger.js"
import type { Principal, RequestState } from "../vocabulary/request-state.js"
import { requestIdFor, requestIdHeader } from "./request-id.js"

/**
 * A request's `ctx.state`. Its logger and client address are made on first use: at `warn` most
 * requests log nothing, and binding a pino child serializes its fields at once.
 */
class RequestScope implements RequestState {
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
  ctx: ParameterizedContext<RequestState>,
  logger: Logger,
  trustedProxies: TrustedProxies,
): void => {
  const requestId = requestIdFor(ctx.get(requestIdHeader))
  ctx.state = new RequestScope(requestId, logger, () => clientAddress(ctx.req, trustedProxies))
  ctx.set(requestIdHeader, requestId)
}
