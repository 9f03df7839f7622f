import type { Middleware, ParameterizedContext } from "koa"
import type { Principal, RequestState } from "../vocabulary/request-state.js"
import { apiError, respondWithError } from "../vocabulary/api-error.js"
import { domainErrorResponse } from "../operations/domain-errors.js"
import type { StoredKeyVerdict } from "../keys/StoredKeys.js"
import type { Buckets } from "../limits/Buckets.js"
import type { Rate, RefusalScope } from "../limits/rate.js"
import { refuseCredentials, type Credentials, type CredentialsReader } from "./auth.js"

/** One throttle: its rate, and where its buckets are kept. */
export interface Throttle {
  readonly rate: Rate
  readonly buckets: Buckets
}

export interface RequireKeyOptions {
  readonly credentials: CredentialsReader
  /** Requests per admitted key. */
  readonly perKey?: Throttle | undefined
  /** Wrong keys per client address, before they are answered 429 without being looked up. */
  readonly failedAuthPerAddress?: Throttle | undefined
  /** Called once per request refused with 429. */
  readonly onRefusal?: ((scope: RefusalScope) => void) | undefined
}

type KeyContext = ParameterizedContext<RequestState>

/** The policy's name in `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers). */
const policyName = '"per-key"'

/** What the key check decided of the credentials, as the request's span is told. */
type AuthOutcome = Credentials["kind"] | StoredKeyVerdict["kind"]

const traceAuth = (ctx: KeyContext, outcome: Exclude<AuthOutcome, "ask">): void => {
  ctx.state.span?.addEvent("petstore.auth", { "petstore.auth.outcome": outcome })
}

/**
 * Admits a request only with a valid key, and bounds what wrong keys cost, never what a valid key
 * may do. A valid key is admitted whatever other requests did, from its address or anywhere; it
 * then meets only its own key's rate limit, which sets `RateLimit-Policy` and `RateLimit` on every
 * answer. A wrong key spends one of its address's failure budget; past the budget it is answered
 * 429 with `Retry-After` (and, were it a `pst_` key not remembered, without a store look-up). Only a
 * well-formed token that could be a key is a guess: a request without credentials, with another
 * scheme, or with an empty or malformed token guesses nothing and spends nothing: 401, always. A traced request's span
 * is told what was decided: the key's id, a `petstore.auth` event with its outcome, and a
 * `petstore.rate_limit.refused` event with its scope for a 429.
 */
export const requireKey = (options: RequireKeyOptions): Middleware<RequestState> => {
  const { perKey, failedAuthPerAddress: failures, onRefusal } = options
  const keyLimit = perKey && {
    ...perKey,
    policy: `${policyName};q=${perKey.rate.capacity};w=${perKey.rate.windowSeconds}`,
  }

  /** 429 with `Retry-After`, counted, and told to the request's span. */
  const refuse = (ctx: KeyContext, scope: RefusalScope, seconds: number, message: string) => {
    onRefusal?.(scope)
    ctx.state.span?.addEvent("petstore.rate_limit.refused", {
      "petstore.rate_limit.scope": scope,
      "petstore.rate_limit.retry_after": seconds,
    })
    ctx.set("Retry-After", String(seconds))
    respondWithError(ctx, apiError("rate_limited", `${message}; retry after ${seconds} s`))
  }

  const admit = async (ctx: KeyContext, principal: Principal, next: () => Promise<unknown>) => {
    ctx.state.principal = principal
    const span = ctx.state.span
    if (span !== undefined) {
      span.setAttribute("petstore.key_id", principal.keyId)
      traceAuth(ctx, "admitted")
    }
    // What a key reads is the key holder's: no cache on the way may keep it, errors included.
    ctx.set("Cache-Control", "no-store")
    if (keyLimit === undefined) return next()
    const decision = await keyLimit.buckets.take(principal.keyId)
    ctx.set("RateLimit-Policy", keyLimit.policy)
    // `t`: the seconds within which no more than `r` requests will be admitted, i.e. until the
    // next token; on a refusal it equals Retry-After, so the two never disagree.
    ctx.set("RateLimit", `${policyName};r=${decision.remaining};t=${decision.secondsToNextToken}`)
    if (decision.allowed) return next()
    refuse(
      ctx,
      "key",
      decision.secondsToNextToken,
      `this API key has made more than ${keyLimit.rate.capacity} requests in ${keyLimit.rate.windowSeconds} s`,
    )
  }

  /** Spends one of the address's failures; past its budget, answers 429 and says so. */
  const refusedOverBudget = async (ctx: KeyContext): Promise<boolean> => {
    if (failures === undefined) return false
    const standing = await failures.buckets.take(ctx.state.clientAddress)
    if (standing.allowed) return false
    refuse(
      ctx,
      "address",
      standing.secondsToNextToken,
      "too many failed authentications from this address",
    )
    return true
  }

  const answerVerdict = async (
    ctx: KeyContext,
    verdict: StoredKeyVerdict,
    next: () => Promise<unknown>,
  ) => {
    switch (verdict.kind) {
      case "admitted":
        return admit(ctx, { keyId: verdict.keyId }, next)
      case "unknown":
        traceAuth(ctx, "unknown")
        return refuseCredentials(ctx, { kind: "wrong" })
      case "deferred":
        traceAuth(ctx, "deferred")
        return refuse(ctx, "lookups", 1, "too many unrecognised keys are being checked right now")
      case "unavailable": {
        traceAuth(ctx, "unavailable")
        ctx.state.span?.recordFailure(verdict.error.cause)
        const { error, headers } = domainErrorResponse(verdict.error)
        ctx.set(headers)
        return respondWithError(ctx, error)
      }
    }
  }

  return async (ctx, next) => {
    const credentials = options.credentials(ctx)
    switch (credentials.kind) {
      case "admitted":
        return admit(ctx, credentials.principal, next)
      // Neither is a guess: nothing is looked up, so nothing is spent, and the answer is 401
      // however often it is sent.
      case "missing":
      case "malformed":
        traceAuth(ctx, credentials.kind)
        return refuseCredentials(ctx, credentials)
      case "wrong":
        traceAuth(ctx, credentials.kind)
        if (!(await refusedOverBudget(ctx))) refuseCredentials(ctx, credentials)
        return
      case "ask": {
        // A key this process admitted before is checked for revocation, not guessed.
        if (credentials.admittedBefore) return answerVerdict(ctx, await credentials.lookUp(), next)
        // Spent before the look-up, so that an address past its budget costs the store nothing;
        // given back when the key turns out valid, or the store could not say.
        if (await refusedOverBudget(ctx)) return
        const verdict = await credentials.lookUp()
        // Not waited for: in Redis it shares a round trip with the key's own rate limit.
        if (failures !== undefined && verdict.kind !== "unknown") {
          void failures.buckets.giveBack(ctx.state.clientAddress)
        }
        return answerVerdict(ctx, verdict, next)
      }
    }
  }
}
