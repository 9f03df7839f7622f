import type { PetRepository } from "@petstore/core"
import type { PetRuntime } from "../vocabulary/runtime.js"
import { Cause, Effect, Either, Exit, Option, Record, Schema, SchemaAST } from "effect"
import { apiError, errorBodyText, type ApiError } from "../vocabulary/api-error.js"
import { decodeRequest } from "./decode.js"
import { describeCause, type Logger } from "../vocabulary/logger.js"
import { boundedMemo } from "./bounded-memo.js"
import { runToExit } from "./run-to-exit.js"
import type { Principal } from "../vocabulary/request-state.js"
import type { HeaderName } from "../vocabulary/headers.js"
import { domainErrorCode, domainErrorResponse, type DomainErrors } from "./domain-errors.js"
import { errorCodes, type ErrorCode } from "../vocabulary/error-catalogue.js"

export type HttpMethod = "GET" | "POST"

/** When an operation stopped being recommended, when it goes away, and what replaces it. */
export interface Deprecation {
  /** RFC 9745 `Deprecation`. */
  readonly since: Date
  /** RFC 8594 `Sunset`. */
  readonly sunset: Date
  /** The path, under the base path, of what replaces it (`Link: <…>; rel="successor-version"`). */
  readonly successor: string
}

/** How the document shows one path or query parameter. */
export interface ParameterDoc {
  readonly description: string
  /** The schema the document shows; unless given, the parameter's text form. */
  readonly schema?: Schema.Schema.All
}

/**
 * Path parameters or a query string: a struct decoding from the text a URL carries, with a
 * description for each of its fields (the mapped type refuses a field left undescribed).
 */
export interface InputSpec<A, I> {
  readonly schema: Schema.Schema<A, I>
  readonly parameters: { readonly [Name in keyof A]-?: ParameterDoc }
}

/** The JSON body an operation reads, or none (`noBody`). */
export interface BodySpec<B, I> {
  readonly schema: Schema.Schema<B, I>
  readonly description: string
  /** Whether the operation reads a body at all. */
  readonly read: boolean
  /**
   * Decodes a JSON object faster than `schema` when it is plainly valid; it must give what
   * `schema` gives, and `undefined` for anything else, which `schema` then decodes (and refuses).
   */
  readonly plain?: (body: Readonly<Record<string, unknown>>) => B | undefined
}

/** Request headers an operation reads, by their names as the document writes them. */
export interface HeaderSpec<A, I> extends InputSpec<A, I> {
  /** The code a header that does not decode, or is sent more than once, is refused with. */
  readonly invalid: ErrorCode
}

/** For an operation without path parameters or without a query. */
export const noParameters: InputSpec<{}, {}> = { schema: Schema.Struct({}), parameters: {} }

/** For an operation that reads no request header of its own. */
export const noHeaders: HeaderSpec<{}, {}> = { ...noParameters, invalid: "bad_request" }

export const noBody: BodySpec<undefined, undefined> = {
  schema: Schema.Undefined,
  description: "",
  read: false,
}

/** What a successful operation answers: its status, body and headers. */
export interface SuccessSpec<R, RI> {
  readonly status: 200 | 201
  readonly description: string
  readonly schema: Schema.Schema<R, RI>
  /** The headers it may carry, by `components.headers` name; each is required unless it is optional there. */
  readonly headers?: Readonly<Record<string, HeaderName>>
  /**
   * Writes a value as JSON faster than encoding it through `schema`; it must give exactly
   * `JSON.stringify(Schema.encodeSync(schema)(value))`, which is what is used without it.
   */
  readonly json?: (value: R) => string
}

export interface OperationInput<P, Q, H, B> {
  readonly params: P
  readonly query: Q
  readonly headers: H
  readonly body: B
}

/** Where the API is mounted. */
export interface Mount {
  readonly basePath: string
}

/** What an operation's `run` knows of the request beyond its input. */
export interface RequestContext extends Mount {
  /** Who sent it, when the operation needs a key. */
  readonly principal: Option.Option<Principal>
}

export interface Success<R> {
  readonly value: R
  readonly headers?: Readonly<Record<string, string>>
}

/** A successful answer as the document and the tests see it, its types sealed. */
export interface SuccessDoc {
  readonly status: 200 | 201
  readonly description: string
  readonly schema: Schema.Schema.All
  readonly headers?: Readonly<Record<string, HeaderName>>
}

/** One operation of the API, declared once: everything the edge and the document need. */
export interface OperationSpec<P, PI, Q, QI, H, HI, B, BI, R, RI, T extends keyof DomainErrors> {
  readonly id: string
  readonly method: HttpMethod
  /** The path template under the base path, as OpenAPI writes it (`/pets/{petId}`). */
  readonly path: `/${string}`
  readonly summary: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly requiresKey: boolean
  readonly deprecation?: Deprecation
  readonly params: InputSpec<P, PI>
  readonly query: InputSpec<Q, QI>
  readonly headers: HeaderSpec<H, HI>
  readonly body: BodySpec<B, BI>
  readonly success: SuccessSpec<R, RI>
  /** The domain failures it can answer with; `run` may fail with these and no others. */
  readonly failures: { readonly [Tag in T]: true }
  readonly run: (
    input: OperationInput<P, Q, H, B>,
    context: RequestContext,
  ) => Effect.Effect<Success<R>, DomainErrors[T], PetRepository>
}

/** A query string parsed: a name given more than once has an array of values. */
export type ParsedQuery = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** A request as the edge hands it to an operation. */
export interface OperationRequest {
  readonly principal: Option.Option<Principal>
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
}

/** What the edge sends back: a status, headers and a JSON body, as text. */
export interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly json: string
}

export interface Edge extends Mount {
  readonly runtime: PetRuntime
  /** Counts a request that storage could not answer, by operation id. */
  readonly recordStorageError: (operation: string) => void
}

export interface DocumentedParameter {
  readonly name: string
  readonly in: "path" | "query" | "header"
  readonly required: boolean
  readonly description: string
  readonly schema: Schema.Schema.All
}

/** An operation with its types sealed inside: what the router, the document and the tests read. */
export interface Operation {
  readonly id: string
  readonly method: HttpMethod
  readonly path: `/${string}`
  readonly summary: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly requiresKey: boolean
  readonly deprecation: Option.Option<Deprecation>
  readonly parameters: ReadonlyArray<DocumentedParameter>
  readonly body: Option.Option<{ readonly schema: Schema.Schema.All; readonly description: string }>
  readonly success: SuccessDoc
  /** Every error code it can answer with, in the catalogue's order. */
  readonly errors: ReadonlyArray<ErrorCode>
  readonly handle: (request: OperationRequest, edge: Edge) => Promise<Reply>
}

/** The fields of a struct schema as a URL carries them: name and whether it must be present. */
const fieldsOf = (schema: Schema.Schema.All): ReadonlyArray<SchemaAST.PropertySignature> => {
  const encoded = SchemaAST.encodedAST(schema.ast)
  return SchemaAST.isTypeLiteral(encoded) ? encoded.propertySignatures : []
}

const documentParameters = <A, I>(
  where: DocumentedParameter["in"],
  spec: InputSpec<A, I>,
): ReadonlyArray<DocumentedParameter> => {
  const docs: Readonly<Record<string, ParameterDoc>> = spec.parameters
  return fieldsOf(spec.schema).flatMap((field) => {
    const name = String(field.name)
    const doc = docs[name]
    if (doc === undefined) return []
    return [
      {
        name,
        in: where,
        required: where === "path" || !field.isOptional,
        description: doc.description,
        schema: doc.schema ?? Schema.make(field.type),
      },
    ]
  })
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

const bodyErrors: ReadonlyArray<ErrorCode> = [
  "invalid_json",
  "invalid_body",
  "payload_too_large",
  "unsupported_media_type",
]

const hasFields = (schema: Schema.Schema.All) => fieldsOf(schema).length > 0

interface ErrorSources {
  readonly requiresKey: boolean
  readonly params: Schema.Schema.All
  readonly query: Schema.Schema.All
  readonly headers: { readonly schema: Schema.Schema.All; readonly invalid: ErrorCode }
  readonly readsBody: boolean
  readonly failures: ReadonlyArray<keyof DomainErrors>
}

/** The error codes an operation can answer with, in the catalogue's order. */
const errorsOf = (sources: ErrorSources): ReadonlyArray<ErrorCode> => {
  const codes = new Set<ErrorCode>([
    ...(sources.requiresKey ? (["unauthorized", "rate_limited"] as const) : []),
    ...(hasFields(sources.params) ? (["invalid_path_parameter"] as const) : []),
    ...(hasFields(sources.query) ? (["invalid_query"] as const) : []),
    ...(hasFields(sources.headers.schema) ? [sources.headers.invalid] : []),
    ...(sources.readsBody ? bodyErrors : []),
    ...sources.failures.map(domainErrorCode),
    // What any request can meet beside its route: the router's answer, and Node's own replies.
    "method_not_allowed",
    "request_timeout",
    "expectation_failed",
    "headers_too_large",
    "internal_error",
  ])
  return errorCodes.filter((code) => codes.has(code))
}

/** Seals an operation's declaration into what the edge runs and the document describes. */
export const defineOperation = <P, PI, Q, QI, H, HI, B, BI, R, RI, T extends keyof DomainErrors>(
  spec: OperationSpec<P, PI, Q, QI, H, HI, B, BI, R, RI, T>,
): Operation => {
  const decodeParams = decodeRequest(spec.params.schema, "invalid_path_parameter")
  const decodeQuery = decodeRequest(spec.query.schema, "invalid_query")
  const decodedQueries = boundedMemo<Either.Either<Q, ApiError>>(1_000)
  const decodeHeaders = decodeRequest(spec.headers.schema, spec.headers.invalid)
  const headerNames = fieldsOf(spec.headers.schema).map((field) => String(field.name))
  const decodeBody = decodeRequest(spec.body.schema, "invalid_body")
  const encodeSuccess = Schema.encodeSync(spec.success.schema)
  const successJson = spec.success.json ?? ((value: R) => JSON.stringify(encodeSuccess(value)))

  const readQuery = (request: OperationRequest): Either.Either<Q, ApiError> =>
    decodedQueries.get(request.querystring, () => decodeQueryOf(request))

  const decodeQueryOf = (request: OperationRequest): Either.Either<Q, ApiError> =>
    Either.flatMap(
      Either.mapLeft(singleValued(request.query()), (name) =>
        apiError("invalid_query", `${name} must be given at most once`),
      ),
      decodeQuery,
    )

  // Decoding is pure, and clients repeat the same few values (an id, `?limit=20`): each distinct
  // input is decoded once, within bounds.
  const decodedParams = boundedMemo<Either.Either<P, ApiError>>(1_000)
  const readParams = (request: OperationRequest): Either.Either<P, ApiError> =>
    decodedParams.get(paramsKey(request.params), () => decodeParams(request.params))

  const decodedHeaders = boundedMemo<Either.Either<H, ApiError>>(1_000)
  const noHeadersRead = decodeHeaders({})
  const readHeaders = (request: OperationRequest): Either.Either<H, ApiError> => {
    if (headerNames.length === 0) return noHeadersRead
    const values = declaredHeaders(request.rawHeaders, headerNames)
    return Either.isLeft(values)
      ? Either.left(apiError(spec.headers.invalid, `${values.left} must be sent at most once`))
      : decodedHeaders.get(JSON.stringify(values.right), () => decodeHeaders(values.right))
  }

  // An operation without a body decodes "no body" once, not per request.
  const noBodyRead = decodeBody(undefined)
  const decodePlainly = spec.body.plain ?? (() => undefined)
  const readBody = async (request: OperationRequest): Promise<Either.Either<B, ApiError>> =>
    Either.flatMap(await request.readBody(), (body) => {
      if (!isJsonObject(body)) {
        return Either.left(apiError("invalid_body", "the body must be a JSON object"))
      }
      const plain = decodePlainly(body)
      return plain === undefined ? decodeBody(body) : Either.right(plain)
    })

  const handle = async (request: OperationRequest, edge: Edge): Promise<Reply> => {
    const params = readParams(request)
    if (Either.isLeft(params)) return errorReply(params.left)
    const query = readQuery(request)
    if (Either.isLeft(query)) return errorReply(query.left)
    const headers = readHeaders(request)
    if (Either.isLeft(headers)) return errorReply(headers.left)
    const body = spec.body.read ? await readBody(request) : noBodyRead
    if (Either.isLeft(body)) return errorReply(body.left)
    const input = {
      params: params.right,
      query: query.right,
      headers: headers.right,
      body: body.right,
    }
    const context = { basePath: edge.basePath, principal: request.principal }
    const outcome = runToExit(edge.runtime, spec.run(input, context))
    const exit = Exit.isExit(outcome) ? outcome : await outcome
    if (Exit.isSuccess(exit)) {
      return {
        status: spec.success.status,
        headers: exit.value.headers ?? {},
        json: successJson(exit.value.value),
      }
    }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure)) throw Cause.squash(exit.cause)
    if (failure.value._tag === "StorageUnavailable") {
      edge.recordStorageError(spec.id)
      request
        .log()
        .warn(
          { operation: spec.id, cause: describeCause(failure.value.cause) },
          "storage unavailable",
        )
    }
    const response = domainErrorResponse(failure.value)
    return errorReply(response.error, response.headers)
  }

  return {
    id: spec.id,
    method: spec.method,
    path: spec.path,
    summary: spec.summary,
    description: spec.description,
    tags: spec.tags,
    requiresKey: spec.requiresKey,
    deprecation: Option.fromNullable(spec.deprecation),
    parameters: [
      ...documentParameters("path", spec.params),
      ...documentParameters("query", spec.query),
      ...documentParameters("header", spec.headers),
    ],
    body: spec.body.read
      ? Option.some({ schema: spec.body.schema, description: spec.body.description })
      : Option.none(),
    success: {
      status: spec.success.status,
      description: spec.success.description,
      schema: spec.success.schema,
      ...(spec.success.headers === undefined ? {} : { headers: spec.success.headers }),
    },
    errors: errorsOf({
      requiresKey: spec.requiresKey,
      params: spec.params.schema,
      query: spec.query.schema,
      headers: { schema: spec.headers.schema, invalid: spec.headers.invalid },
      readsBody: spec.body.read,
      failures: Record.keys(spec.failures),
    }),
    handle,
  }
}
