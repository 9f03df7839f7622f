import { Option } from "effect"
import { deprecationHeaders, type Deprecation } from "../operations/Deprecation.js"
import type { Operation } from "../operations/operation.js"
import { ErrorBody } from "./ErrorBody.js"
import { headerComponents, headerRef } from "../vocabulary/headers.js"
import { componentSchemas, type ComponentSchemas } from "./json-schema.js"
import type {
  ApiServer,
  Header,
  OpenApiDocument,
  Operation as OperationObject,
  PathItem,
  Tag,
} from "../vocabulary/openapi-types.js"
import { operationErrors } from "./operation-errors.js"
import { operationParameters } from "./operation-parameters.js"
import { errorResponses, jsonContent, type Headers } from "./responses.js"

export const securitySchemeName = "bearerAuth"

export interface OpenApiInput {
  /** Where the versioned API is mounted (`/v1`): the paths of `Link` and `Location` start with it. */
  readonly basePath: string
  /** The base URLs of the API, each ending in `basePath` (or relative: the base path itself). */
  readonly servers: ReadonlyArray<ApiServer>
  /** The operations to describe: their declarations, as the router serves them. */
  readonly operations: ReadonlyArray<Operation>
  /** What the operations' tags mean; the Petstore's `pets` unless given. A tag not here is listed by name. */
  readonly tags?: ReadonlyArray<Tag>
}

const petTags: ReadonlyArray<Tag> = [{ name: "pets", description: "The animals of the store." }]

/** Every tag the operations use, in the order they first use it, described where it is known. */
const documentTags = (
  operations: ReadonlyArray<Operation>,
  described: ReadonlyArray<Tag>,
): ReadonlyArray<Tag> =>
  [...new Set(operations.flatMap((operation) => operation.tags))].map(
    (name) => described.find((tag) => tag.name === name) ?? { name },
  )

const longDate = (date: Date) =>
  date.toLocaleDateString("en-GB", {
    day: "numeric",
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  })

/** `Deprecation`, `Sunset` and `Link`, each with the one value the server sends. */
const deprecationHeaderDocs = (deprecation: Deprecation, basePath: string): Headers => {
  const values = deprecationHeaders(deprecation, basePath)
  const header = (description: string, value: string): Header => ({
    description,
    required: true,
    schema: { type: "string", const: value },
  })
  return {
    Deprecation: header(
      "When this operation was deprecated (RFC 9745): `@` and seconds since 1970-01-01T00:00:00Z.",
      values.Deprecation,
    ),
    Sunset: header("When this operation will be removed (RFC 8594).", values.Sunset),
    Link: header("What replaces this operation (RFC 8288 `successor-version`).", values.Link),
  }
}

const describeOperation = (
  operation: Operation,
  basePath: string,
  schemas: ComponentSchemas,
  headers: Readonly<Record<string, Header>>,
): OperationObject => {
  const deprecated = Option.map(operation.deprecation, (notice) => ({
    notice,
    headers: deprecationHeaderDocs(notice, basePath),
  }))
  const deprecationHeadersOf = Option.match(deprecated, {
    onNone: () => ({}),
    onSome: ({ headers }) => headers,
  })
  const { success } = operation
  const parameters = operationParameters(operation)
  const admittedHeaders: Headers = operation.requiresKey
    ? { "RateLimit-Policy": headerRef("RateLimitPolicy"), RateLimit: headerRef("RateLimit") }
    : {}
  const successHeaders: Headers = {
    "X-Request-Id": headerRef("XRequestId"),
    ...admittedHeaders,
    ...Object.fromEntries(
      Object.entries(success.headers ?? {}).map(([name, component]) => [
        name,
        headerRef(component),
      ]),
    ),
    ...deprecationHeadersOf,
  }
  return {
    operationId: operation.id,
    summary: operation.summary,
    description: Option.match(deprecated, {
      onNone: () => operation.description,
      onSome: ({ notice }) =>
        `${operation.description} To be removed on ${longDate(notice.sunset)}. Every response it answers carries \`Deprecation\`, \`Sunset\` and \`Link: <${basePath}${notice.successor}>; rel="successor-version"\`.`,
    }),
    tags: operation.tags,
    ...Option.match(deprecated, {
      onNone: () => ({}),
      onSome: ({ notice }) => ({
        deprecated: true,
        "x-sunset": notice.sunset.toISOString().slice(0, 10),
      }),
    }),
    security: operation.requiresKey ? [{ [securitySchemeName]: [] }] : [],
    ...(parameters.length > 0
      ? {
          parameters: parameters.map((parameter) => ({
            name: parameter.name,
            in: parameter.in,
            required: parameter.required,
            description: parameter.description,
            schema: schemas.of(parameter.schema),
          })),
        }
      : {}),
    ...(operation.body.read
      ? {
          requestBody: {
            description: operation.body.description,
            required: true,
            content: jsonContent(
              schemas.of(operation.body.schema, { excessProperties: "ignored" }),
            ),
          },
        }
      : {}),
    responses: {
      [String(success.status)]: {
        description: success.description,
        headers: successHeaders,
        ...(success.status === 204 ? {} : { content: jsonContent(schemas.of(success.schema)) }),
      },
      ...errorResponses(
        operationErrors(operation),
        { route: deprecationHeadersOf, admitted: admittedHeaders },
        headers,
      ),
    },
  }
}

/** The OpenAPI 3.1 description of the API, generated from the operations and the core schemas. */
export const openApiDocument = (input: OpenApiInput): OpenApiDocument => {
  const schemas = componentSchemas()
  schemas.of(ErrorBody)
  const headers = headerComponents(input.basePath)
  const paths: Record<string, PathItem> = {}
  for (const operation of input.operations) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method.toLowerCase()]: describeOperation(
        operation,
        input.basePath,
        schemas,
        headers,
      ),
    }
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Petstore",
      version: "1.0.0",
      description:
        "Manage the animals offered in a pet store: list them, add one, fetch one. Every operation needs an API key, sent as `Authorization: Bearer <key>`. Requests and responses are JSON; an error answers with the Error body, whose `status` equals the HTTP status. Every response carries `X-Request-Id`: the request's own when it sent a valid one (1 to 128 visible ASCII characters), otherwise one the server made. Each API key has a rate limit, per server process: `RateLimit-Policy` and `RateLimit` say what it is and what is left, and a request over it gets 429 with `Retry-After`.",
    },
    servers: input.servers,
    tags: documentTags(input.operations, input.tags ?? petTags),
    paths,
    components: {
      schemas: schemas.components(),
      headers,
      securitySchemes: {
        [securitySchemeName]: {
          type: "http",
          scheme: "bearer",
          description: "An API key of the service, sent as `Authorization: Bearer <key>`.",
        },
      },
    },
  }
}
