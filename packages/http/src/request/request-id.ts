import { randomUUID } from "node:crypto"

export const requestIdHeader = "X-Request-Id"

/** 1 to 128 visible ASCII characters (0x21–0x7E): safe in a header and in a log line as it is. */
const acceptable = /^[\x21-\x7E]{1,128}$/

export const newRequestId = (): string => randomUUID()

/**
 * The id a request is known by: the client's `X-Request-Id` when it is acceptable, else a new
 * UUID. Never a refusal: a proxy's or client's odd id is replaced, not an error. Several
 * headers are replaced too (Node joins them with `, `, which is not acceptable).
 */
export const requestIdFor = (sent: string | ReadonlyArray<string> | undefined): string =>
  typeof sent === "string" && acceptable.test(sent) ? sent : newRequestId()
