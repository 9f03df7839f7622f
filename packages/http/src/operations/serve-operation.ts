import { Cause, Effect, Either, Exit, Option, type Schema } from "effect"
import { LRUCache } from "lru-cache"
import { schemaCodec, type SchemaCodec } from "../codecs/schema-codec.js"
import { apiError, errorBodyText, type ApiError } from "../vocabulary/api-error.js"
import { idempotentReplayedHeader } from "../vocabulary/headers.js"
import { describeCause, type Logger } from "../vocabulary/logger.js"
import type { Principal } from "../vocabulary/request-state.js"
import type { PetRuntime } from "../vocabulary/runtime.js"
import type { RequestSpan } from "../vocabulary/tracing.js"
import { decodeRequest } from "./decode.js"
import { domainErrorResponse } from "./domain-errors.js"
import type { Handler, Mount, Operation, OperationInput, RequestContext } from "./operation.js"
import { runToExit } from "./run-to-exit.js"
import { structFields } from "./struct-fields.js"

/** A query string parsed: a name given more than once has an array of values. */
export type ParsedQuery = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** A request as the edge hands it to an operation. */
export interface OperationRequest {
  readonly principal: Option.Option<Principal>
  /** Where the client reaches the API (the mount path, then the base path): what URLs start with. */
  readonly basePath: string
  /** The request's logger (made when first asked for): its lines name the request id. */
  readonly log: () => Logger
  /** As Node gives them: name, value, name, value… */
  readonly rawHeaders: ReadonlyArray<string>
  readonly params: Readonly<Record<string, string>>
  /** The query string as sent, without `?`: what a decoded query is remembered by. */
  readonly querystring: string
  /** The query string parsed (asked for only when `querystring` was not decoded before). */
  readonly query: () => ParsedQuery
  readonly readBody: () => Promise<Either.Either<unknown, ApiError>>
  /** The request's span, when the app traces: the handler's effect runs in a child of it. */
  readonly span?: RequestSpan | undefined
}

/** What the edge sends back: a status, headers and a JSON body as text, or none (a 204). */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly json: string | undefined
}

/** What every operation is served with. */
export interface Edge extends Mount {
  readonly runtime: PetRuntime
  /** Counts a request that storage could not answer, by operation id. */
  readonly recordStorageError: (operation: string) => void
}

/** An operation with its handler: what the router registers and the app documents. */
export interface ServedOperation extends Operation {
  readonly handle: (request: OperationRequest, edge: Edge) => Promise<Reply>
}

/**
 * What decoded path parameters are remembered by. A route's parameters are always the same
 * names in the same order: one parameter is its own key, several are keyed by their JSON.
 */
const paramsKey = (params: Readonly<Record<string, string>>): string => {
  const values = Object.values(params)
  return (values.length === 1 ? values[0] : undefined) ?? JSON.stringify(params)
}

/** A query string where each parameter appears at most once, or the name of one that does not. */
const singleValued = (query: ParsedQuery): Either.Either<Record<string, string>, string> => {
  const single: Record<string, string> = {}
  for (const [name, value] of Object.entries(query)) {
    if (typeof value === "string") single[name] = value
    else if (value !== undefined) return Either.left(name)
  }
  return Either.right(single)
}

/**
 * The values of the headers named in `names` (matched case-insensitively, keyed as `names`
 * writes them), or the name of one sent more than once.
 */
const declaredHeaders = (
  rawHeaders: ReadonlyArray<string>,
  names: ReadonlyArray<string>,
): Either.Either<Record<string, string>, string> => {
  const values: Record<string, string> = {}
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const sent = rawHeaders[index]?.toLowerCase()
    const name = names.find((declared) => declared.toLowerCase() === sent)
    if (name === undefined) continue
    if (name in values) return Either.left(name)
    values[name] = rawHeaders[index + 1] ?? ""
  }
  return Either.right(values)
}

const isJsonObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const errorReply = (error: ApiError, headers: Readonly<Record<string, string>> = {}): Reply => ({
  status: error.status,
  headers,
  json: errorBodyText(error),
})

/** Distinct inputs remembered per operation, and the longest key kept (longer ones are not). */
const decodedKept = 1_000
const longestKeyKept = 256

/**
 * Decoding is pure, and clients repeat the same few values (an id, `?limit=20`): each distinct
 * input is decoded once, the least recently used forgotten first, within bounds whatever clients
 * send.
 */
const decodedCache = <V extends {}>() =>
  new LRUCache<string, V>({
    max: decodedKept,
    maxSize: decodedKept * longestKeyKept,
    maxEntrySize: longestKeyKept,
    sizeCalculation: (_value, key) => Math.max(1, key.length),
  })

const remembered = <V extends {}>(cache: LRUCache<string, V>, key: string, decode: () => V): V => {
  const known = cache.get(key)
  if (known !== undefined) return known
  const value = decode()
  cache.set(key, value)
  return value
}

type Decoded<S extends Schema.Schema.AnyNoContext> = Either.Either<Schema.Schema.Type<S>, ApiError>

/**
 * Joins an operation's declaration with its handler into what the router runs: it decodes the
 * path parameters, query, headers and body by the declared schemas (failures become 400s that
 * name the field), runs the handler on the runtime, writes the success by its schema's compiled
 * codec and maps each domain failure through the one table of domain errors, counting and
 * logging storage failures. A traced request's handler runs in a span named by the operation id,
 * a child of the request's span, which is told of a replayed create and of a storage failure.
 */
export const serveOperation = <Op extends Operation>(
  operation: Op,
  handler: Handler<Op>,
): ServedOperation => {
  type Params = Op["params"]["schema"]
  type Query = Op["query"]["schema"]
  type Headers = Op["headers"]["schema"]
  type Body = Op["body"]["schema"]
  const decodeParams = decodeRequest(operation.params.schema, "invalid_path_parameter")
  const decodeQuery = decodeRequest(operation.query.schema, "invalid_query")
  const decodeHeaders = decodeRequest(operation.headers.schema, operation.headers.invalid)
  const headerNames = structFields(operation.headers.schema).map((field) => String(field.name))
  const decodeBody = decodeRequest(operation.body.schema, "invalid_body")
  const success: SchemaCodec<Schema.Schema.Type<Op["success"]["schema"]>> | undefined =
    operation.success.status === 204 ? undefined : schemaCodec(operation.success.schema)

  const decodedParams = decodedCache<Decoded<Params>>()
  const readParams = (request: OperationRequest): Decoded<Params> =>
    remembered(decodedParams, paramsKey(request.params), () => decodeParams(request.params))

  const decodedQueries = decodedCache<Decoded<Query>>()
  const decodeQueryOf = (request: OperationRequest): Decoded<Query> =>
    Either.flatMap(
      Either.mapLeft(singleValued(request.query()), (name) =>
        apiError("invalid_query", `${name} must be given at most once`),
      ),
      decodeQuery,
    )
  const readQuery = (request: OperationRequest): Decoded<Query> =>
    remembered(decodedQueries, request.querystring, () => decodeQueryOf(request))

  const decodedHeaders = decodedCache<Decoded<Headers>>()
  const noHeadersRead: Decoded<Headers> = decodeHeaders({})
  const readHeaders = (request: OperationRequest): Decoded<Headers> => {
    if (headerNames.length === 0) return noHeadersRead
    const values = declaredHeaders(request.rawHeaders, headerNames)
    return Either.isLeft(values)
      ? Either.left(apiError(operation.headers.invalid, `${values.left} must be sent at most once`))
      : remembered(decodedHeaders, JSON.stringify(values.right), () => decodeHeaders(values.right))
  }

  // An operation without a body decodes "no body" once, not per request.
  const noBodyRead: Decoded<Body> = decodeBody(undefined)
  const readBody = async (request: OperationRequest): Promise<Decoded<Body>> =>
    Either.flatMap(await request.readBody(), (body) =>
      isJsonObject(body)
        ? decodeBody(body)
        : Either.left(apiError("invalid_body", "the body must be a JSON object")),
    )

  /**
   * The handler's effect in a span named by the operation id, a child of the request's span. An
   * expected failure leaves it as a success that names the failure (`petstore.failure`): a 404
   * is no error, and a failure's fields (an id, an idempotency key) stay out of the trace; the
   * request's span says how it was answered. A defect fails the span.
   */
  const inSpan = <A, E extends { readonly _tag: string }, R>(
    effect: Effect.Effect<A, E, R>,
    span: RequestSpan,
  ): Effect.Effect<A, E, R> =>
    Effect.flatMap(
      Effect.withSpan(
        Effect.tap(Effect.either(effect), (result) =>
          Either.isLeft(result)
            ? Effect.annotateCurrentSpan("petstore.failure", result.left._tag)
            : Effect.void,
        ),
        operation.id,
        { parent: span.parent },
      ),
      // Once the span has ended: the failure again, as the handler gave it.
      (result) => result,
    )

  const handle = async (request: OperationRequest, edge: Edge): Promise<Reply> => {
    const params = readParams(request)
    if (Either.isLeft(params)) return errorReply(params.left)
    const query = readQuery(request)
    if (Either.isLeft(query)) return errorReply(query.left)
    const headers = readHeaders(request)
    if (Either.isLeft(headers)) return errorReply(headers.left)
    const body = operation.body.read ? await readBody(request) : noBodyRead
    if (Either.isLeft(body)) return errorReply(body.left)
    const input: OperationInput<Op> = {
      params: params.right,
      query: query.right,
      headers: headers.right,
      body: body.right,
    }
    const context: RequestContext = { basePath: request.basePath, principal: request.principal }
    const effect = handler(input, context)
    const span = request.span
    const outcome = runToExit(edge.runtime, span === undefined ? effect : inSpan(effect, span))
    const exit = Exit.isExit(outcome) ? outcome : await outcome
    if (Exit.isSuccess(exit)) {
      const headers = exit.value.headers ?? {}
      if (span !== undefined && headers[idempotentReplayedHeader] === "true") {
        span.setAttribute("petstore.idempotency.replayed", true)
      }
      return {
        status: operation.success.status,
        headers,
        json: success?.encodeJson(exit.value.value),
      }
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure)) throw Cause.squash(exit.cause)
    if (failure.value._tag === "StorageUnavailable") {
      edge.recordStorageError(operation.id)
      request
        .log()
        .warn(
          { operation: operation.id, cause: describeCause(failure.value.cause) },
          "storage unavailable",
        )
      span?.recordFailure(failure.value.cause)
    }
    const response = domainErrorResponse(failure.value)
    return errorReply(response.error, response.headers)
  }

  return { ...operation, handle }
}
