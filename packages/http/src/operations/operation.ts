import type { PetRepository } from "@petstore/core"
import { Option, Record, Schema, type Effect } from "effect"
import type { HeaderName } from "../vocabulary/headers.js"
import type { ErrorCode } from "../vocabulary/error-catalogue.js"
import type { HttpMethod } from "../vocabulary/openapi-types.js"
import type { Principal } from "../vocabulary/request-state.js"
import type { Deprecation } from "./Deprecation.js"
import type { DomainErrors } from "./domain-errors.js"

export type { HttpMethod } from "../vocabulary/openapi-types.js"

/** The statuses a success may be answered with: 204 alone has no body. */
export type SuccessStatus = 200 | 201 | 202 | 204

/** A schema of request or response data: it needs no service to decode or encode. */
export type DataSchema = Schema.Schema.AnyNoContext

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
export interface InputSpec<S extends DataSchema> {
  readonly schema: S
  readonly parameters: { readonly [Name in keyof Schema.Schema.Type<S>]-?: ParameterDoc }
}

/** Request headers an operation reads, by their names as the document writes them. */
export interface HeaderSpec<S extends DataSchema> extends InputSpec<S> {
  /** The code a header that does not decode, or is sent more than once, is refused with. */
  readonly invalid: ErrorCode
}

/** The JSON body an operation reads, or none (`noBody`). */
export interface BodySpec<S extends DataSchema> {
  readonly schema: S
  readonly description: string
  /** Whether the operation reads a body at all. */
  readonly read: boolean
}

/** The status a success with a body of schema `S` may be declared with: 204 for none (`Schema.Void`). */
type SuccessStatusOf<S extends DataSchema> = [S] extends [typeof Schema.Void]
  ? 204
  : Exclude<SuccessStatus, 204>

/** What a successful operation answers: its status, body (none for 204: `noContent`) and headers. */
export interface SuccessSpec<S extends DataSchema> {
  readonly status: SuccessStatus
  readonly description: string
  readonly schema: S
  /** The headers it may carry, by `components.headers` name; each is required unless it is optional there. */
  readonly headers?: Readonly<Record<string, HeaderName>>
}

/** For an operation without path parameters or without a query. */
export const noParameters: InputSpec<Schema.Struct<{}>> = {
  schema: Schema.Struct({}),
  parameters: {},
}

/** For an operation that reads no request header of its own. */
export const noHeaders: HeaderSpec<Schema.Struct<{}>> = { ...noParameters, invalid: "bad_request" }

/** A success answered `204 No Content`: no body, only the headers named. */
export const noContent = (
  description: string,
  headers?: Readonly<Record<string, HeaderName>>,
): SuccessSpec<typeof Schema.Void> & { readonly status: 204 } => ({
  status: 204,
  description,
  schema: Schema.Void,
  ...(headers === undefined ? {} : { headers }),
})

export const noBody: BodySpec<typeof Schema.Undefined> = {
  schema: Schema.Undefined,
  description: "",
  read: false,
}

/** What an operation is, apart from how it is answered. */
interface OperationFacts {
  readonly id: string
  readonly method: HttpMethod
  /** The path template under the base path, as OpenAPI writes it (`/pets/{petId}`). */
  readonly path: `/${string}`
  readonly summary: string
  readonly description: string
  readonly tags: ReadonlyArray<string>
  readonly requiresKey: boolean
}

interface OperationParts<
  Params extends DataSchema,
  Query extends DataSchema,
  Headers extends DataSchema,
  Body extends DataSchema,
  Success extends DataSchema,
> {
  readonly params: InputSpec<Params>
  readonly query: InputSpec<Query>
  readonly headers: HeaderSpec<Headers>
  readonly body: BodySpec<Body>
  readonly success: SuccessSpec<Success>
}

/**
 * One operation of the API as it is written: data only (what it reads, what it answers, which
 * domain failures it can meet), no handler. Serving it is `serveOperation`'s, documenting it the
 * OpenAPI document's.
 */
export interface OperationSpec<
  Params extends DataSchema,
  Query extends DataSchema,
  Headers extends DataSchema,
  Body extends DataSchema,
  Success extends DataSchema,
  Failure extends keyof DomainErrors,
>
  extends OperationFacts, OperationParts<Params, Query, Headers, Body, Success> {
  readonly deprecation?: Deprecation
  /** The domain failures it can answer with; its handler may fail with these and no others. */
  readonly failures: { readonly [Tag in Failure]: true }
}

/**
 * An operation's declaration, sealed. Without type arguments, any operation: what the tables,
 * the router and the document read.
 */
export interface Operation<
  Params extends DataSchema = DataSchema,
  Query extends DataSchema = DataSchema,
  Headers extends DataSchema = DataSchema,
  Body extends DataSchema = DataSchema,
  Success extends DataSchema = DataSchema,
  Failure extends keyof DomainErrors = keyof DomainErrors,
>
  extends OperationFacts, OperationParts<Params, Query, Headers, Body, Success> {
  readonly deprecation: Option.Option<Deprecation>
  readonly failures: ReadonlyArray<Failure>
}

/** Seals an operation's declaration: nothing is decoded, compiled or run. */
export const defineOperation = <
  Params extends DataSchema,
  Query extends DataSchema,
  Headers extends DataSchema,
  Body extends DataSchema,
  Success extends DataSchema,
  Failure extends keyof DomainErrors,
>(
  spec: OperationSpec<Params, Query, Headers, Body, Success, Failure> & {
    readonly success: { readonly status: SuccessStatusOf<Success> }
  },
): Operation<Params, Query, Headers, Body, Success, Failure> => {
  const { deprecation, failures, ...rest } = spec
  return { ...rest, deprecation: Option.fromNullable(deprecation), failures: Record.keys(failures) }
}

/** Where the API is mounted. */
export interface Mount {
  readonly basePath: string
}

/** What an operation's handler knows of the request beyond its input. */
export interface RequestContext extends Mount {
  /** Who sent it, when the operation needs a key. */
  readonly principal: Option.Option<Principal>
}

/** An operation's request, decoded by its schemas. */
export interface OperationInput<Op extends Operation> {
  readonly params: Schema.Schema.Type<Op["params"]["schema"]>
  readonly query: Schema.Schema.Type<Op["query"]["schema"]>
  readonly headers: Schema.Schema.Type<Op["headers"]["schema"]>
  readonly body: Schema.Schema.Type<Op["body"]["schema"]>
}

export interface Success<R> {
  readonly value: R
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * What answers an operation: its input and request context to the core's use cases, failing
 * only with the domain failures the operation declares.
 */
export type Handler<Op extends Operation> = (
  input: OperationInput<Op>,
  context: RequestContext,
) => Effect.Effect<
  Success<Schema.Schema.Type<Op["success"]["schema"]>>,
  DomainErrors[Op["failures"][number]],
  PetRepository
>
