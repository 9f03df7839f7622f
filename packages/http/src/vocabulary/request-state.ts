import type { Logger } from "./logger.js"
import type { RequestSpan } from "./tracing.js"

/** Who made an authenticated request: the key they presented, by an id that is not the key. */
export interface Principal {
  /**
   * For a key of `PETSTORE_API_KEYS`, `env:` and its position in that list (`env:1` is the
   * first); for a stored key, its id (`key_…`, as `npm run keys -- list` shows it). Neither can
   * be turned back into the key.
   */
  readonly keyId: string
}

/** What every request carries from the moment it reaches Koa. */
export interface RequestState {
  /** The client's acceptable `X-Request-Id`, or one made for the request. */
  readonly requestId: string
  /** The app's logger bound to `requestId`: every line about the request names it. */
  readonly log: Logger
  /** The client's address as the limits count it (see `clientAddress`). */
  readonly clientAddress: string
  /** Who sent it, once the key check admitted it. */
  principal?: Principal
  /** The request's span, when the app traces (`AppOptions.tracing`). */
  readonly span?: RequestSpan | undefined
}
