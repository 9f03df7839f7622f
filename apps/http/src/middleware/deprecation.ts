import type { Context, Middleware } from "koa"

export interface DeprecationNotice {
  /** When the operation became deprecated (RFC 9745 `Deprecation`). */
  readonly since: Date
  /** When it will be removed (RFC 8594 `Sunset`). */
  readonly sunset: Date
  /** The URI of what replaces it, sent as `Link: <…>; rel="successor-version"`. */
  readonly successor: string
}

/**
 * Marks every response to a deprecated operation, whatever its status: placed before
 * authentication so that even a 401 tells the client the operation is going away.
 */
export const deprecation = (
  appliesTo: (ctx: Context) => boolean,
  notice: DeprecationNotice,
): Middleware => {
  const headers = {
    Deprecation: `@${Math.floor(notice.since.getTime() / 1000)}`,
    Sunset: notice.sunset.toUTCString(),
    Link: `<${notice.successor}>; rel="successor-version"`,
  }
  return async (ctx, next) => {
    if (appliesTo(ctx)) ctx.set(headers)
    await next()
  }
}
