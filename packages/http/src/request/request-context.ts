import type { ParameterizedContext } from "koa"
import { clientAddress, type TrustedProxies } from "./client-address.js"
import type { Logger } from "../vocabulary/logger.js"
import type { Principal, RequestState } from "../vocabulary/request-state.js"
import type { RequestSpan } from "../vocabulary/tracing.js"
import { requestIdFor, requestIdHeader } from "./request-id.js"

/**
 * A request's `ctx.state`. Its logger and client address are made on first use: at `warn` most
 * requests log nothing, and binding a pino child serializes its fields at once. A traced
 * request's logger names its trace and span too (`trace_id`, `span_id`).
 */
class RequestScope implements RequestState {
  principal?: Principal
  #log: Logger | undefined
  #clientAddress: string | undefined
  constructor(
    readonly requestId: string,
    private readonly logger: Logger,
    private readonly addressOf: () => string,
    readonly span: RequestSpan | undefined,
  ) {}
  get log(): Logger {
    this.#log ??= this.logger.child(
      this.span === undefined
        ? { requestId: this.requestId }
        : { requestId: this.requestId, trace_id: this.span.traceId, span_id: this.span.spanId },
    )
    return this.#log
  }
  get clientAddress(): string {
    this.#clientAddress ??= this.addressOf()
    return this.#clientAddress
  }
}

/**
 * Names the request and echoes the name in `X-Request-Id`, set before anything else so that
 * every answer carries it, errors and 401s included. `span`, when the request is traced, is
 * kept in its state.
 */
export const nameRequest = (
  ctx: ParameterizedContext<RequestState>,
  logger: Logger,
  trustedProxies: TrustedProxies,
  span: RequestSpan | undefined,
): void => {
  const requestId = requestIdFor(ctx.get(requestIdHeader))
  ctx.state = new RequestScope(
    requestId,
    logger,
    () => clientAddress(ctx.req, trustedProxies),
    span,
  )
  ctx.set(requestIdHeader, requestId)
}
