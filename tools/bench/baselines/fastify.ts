/**
 * Baseline (c): the Petstore API in Fastify 5, as Fastify is meant to be used: JSON Schema
 * validation of query, path and body (Ajv; types coerced in the query and path only, never in
 * the body), responses serialized from their schemas (fast-json-stringify), an `onRequest`
 * hook for the key, and an error handler that turns every failure into the JSON Error body.
 *
 * What it shares with the service, and why:
 * - Its schemas are the service's own: the parameters, body and responses of the OpenAPI
 *   document the service publishes (`openApiDocument` of `@petstore/http`, references
 *   inlined), which a team writing this API in Fastify would start from. They are read once,
 *   when the routes are declared, and compiled by Fastify's Ajv and fast-json-stringify, so no
 *   code of the service runs per request: what is measured per request is still Fastify's
 *   validation and serialization, not effect/Schema's.
 * - Not the store: `MemoryPetRepository` answers through Effect, so a request would pay a fiber
 *   (`Effect.runSync`) and a `Pet` class instance, which are costs of the service's design and
 *   part of what this comparison measures. The baselines' `PetStore` keeps the same data
 *   structure written plainly (see `pet-store.ts`).
 * - Not the fixed texts and the key check, which stay in `pet-store.ts` with the other baselines'.
 *
 * Importing `@petstore/http` loads the service's HTTP package (Koa and effect included) into this
 * process: about 60 MiB more RSS and 19 MiB more heap at start. This baseline's memory is not
 * reported, and a heap that much larger only lengthens full collections, a few a minute under
 * this load; the node:http baseline, whose memory is reported, loads none of it.
 *
 *   PORT=8082 PETSTORE_API_KEYS=key node --import tsx baselines/fastify.ts
 */
import { Ajv } from "ajv"
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from "fastify"
import {
  maxBodyBytes,
  openApiDocument,
  petOperations,
  sameOriginServers,
  type JsonObject,
  type JsonSchema,
  type JsonValue,
  type OpenApiDocument,
} from "@petstore/http"
import {
  announce,
  apiKeys,
  decodeCursor,
  deprecationHeaders,
  errorBody,
  listenAddress,
  nextLink,
  petNotFound,
  refuseKey,
  seededStore,
  type ErrorBody,
  type Status,
} from "./pet-store.js"

const store = seededStore()
const keys = apiKeys()

const document: OpenApiDocument = openApiDocument({
  basePath: "/v1",
  servers: sameOriginServers("/v1"),
  operations: petOperations,
})
const componentPrefix = "#/components/schemas/"

const isObject = (value: JsonValue): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `schema` with every reference to a component replaced by the component, recursively. */
const inlined = (schema: JsonValue): JsonValue => {
  if (Array.isArray(schema)) return schema.map(inlined)
  if (!isObject(schema)) return schema
  const reference = schema["$ref"]
  if (typeof reference === "string" && reference.startsWith(componentPrefix)) {
    const component = document.components.schemas[reference.slice(componentPrefix.length)]
    if (component === undefined) throw new Error(`the document has no ${reference}`)
    return inlined(component)
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inlined(value)]))
}

const component = (name: string): JsonValue => inlined({ $ref: `${componentPrefix}${name}` })

const operation = (path: string, method: "get" | "post") => {
  const described = document.paths[path]?.[method]
  if (described === undefined) throw new Error(`the document has no ${method} ${path}`)
  return described
}

/** The operation's query or path parameters as one object schema, as Fastify validates them. */
const parameters = (described: ReturnType<typeof operation>, where: "query" | "path") => {
  const listed = (described.parameters ?? []).filter((parameter) => parameter.in === where)
  return {
    type: "object",
    required: listed.filter((parameter) => parameter.required).map((parameter) => parameter.name),
    properties: Object.fromEntries(
      listed.map((parameter) => [parameter.name, inlined(parameter.schema)]),
    ),
  }
}

const json = (content: Readonly<Record<string, { readonly schema: JsonSchema }>> | undefined) => {
  const schema = content?.["application/json"]?.schema
  if (schema === undefined) throw new Error("the document has no application/json schema there")
  return inlined(schema)
}

/** The success response's schema; every 4xx is serialized as the Error body. */
const responses = (described: ReturnType<typeof operation>, status: string) => ({
  [status]: json(described.responses[status]?.content),
  "4xx": component("Error"),
})

const listPets = operation("/pets", "get")
const createPet = operation("/pets", "post")
const getPet = operation("/pets/{petId}", "get")

interface ListQuery {
  readonly limit: number
  readonly status?: Status
  readonly cursor?: string
}

const app = Fastify({ logger: false, bodyLimit: maxBodyBytes })

// Coercing strings is what a query string and a path need, and what a JSON body must not get.
// `int32` and `int64` are OpenAPI's formats; the document states their bounds as well.
const formats = { int32: true, int64: true } as const
const coercing = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true, formats })
const strict = new Ajv({ coerceTypes: false, allErrors: true, formats })
app.setValidatorCompiler(({ schema, httpPart }) =>
  (httpPart === "body" ? strict : coercing).compile(schema),
)
app.removeContentTypeParser("text/plain")
app.addContentTypeParser(
  /^application\/[a-z0-9!#$&^_.-]+\+json$/,
  { parseAs: "string" },
  app.getDefaultJsonParser("error", "error"),
)

declare module "fastify" {
  interface FastifyContextConfig {
    /** Every response of the route carries the deprecation headers. */
    readonly deprecated?: boolean
  }
}

app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
  if (request.routeOptions.config.deprecated === true) reply.headers(deprecationHeaders)
  const refusal = refuseKey(request.headers.authorization, keys)
  if (refusal !== undefined) {
    reply.code(401).header("WWW-Authenticate", refusal.challenge)
    return reply.send(refusal.body)
  }
  reply.header("Cache-Control", "no-store")
})

const validationCodes: Readonly<Record<string, string>> = {
  body: "invalid_body",
  querystring: "invalid_query",
  params: "invalid_path_parameter",
}

const asErrorBody = (error: FastifyError): ErrorBody => {
  if (error.validation !== undefined)
    return errorBody(
      400,
      validationCodes[error.validationContext ?? "body"] ?? "invalid_body",
      error.message,
    )
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return errorBody(
        415,
        "unsupported_media_type",
        "the body must be sent as Content-Type: application/json",
      )
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return errorBody(400, "invalid_body", "a JSON object body is required")
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return errorBody(400, "invalid_json", `the body is not valid JSON: ${error.message}`)
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return errorBody(413, "payload_too_large", `the body exceeds ${maxBodyBytes} bytes`)
  }
  if (error instanceof SyntaxError)
    return errorBody(400, "invalid_json", `the body is not valid JSON: ${error.message}`)
  return errorBody(500, "internal_error", "an unexpected error occurred")
}

app.setErrorHandler((error: FastifyError, _request, reply) => {
  const body = asErrorBody(error)
  if (body.status === 500) console.error(error)
  return reply.code(body.status).send(body)
})

app.setNotFoundHandler((request, reply) =>
  reply.code(404).send(errorBody(404, "not_found", `nothing is at ${request.url.split("?")[0]}`)),
)

app.get<{ Querystring: ListQuery }>(
  "/v1/pets",
  {
    schema: {
      querystring: parameters(listPets, "query"),
      response: responses(listPets, "200"),
    },
  },
  async (request, reply) => {
    const { limit, status, cursor } = request.query
    const afterId = cursor === undefined ? undefined : decodeCursor(cursor)
    if (cursor !== undefined && afterId === undefined)
      return reply.code(400).send(errorBody(400, "invalid_query", "cursor is not a cursor"))
    const page = store.list(limit, status, afterId)
    if (page.next !== undefined) reply.header("Link", nextLink(limit, status, page.next))
    return page.pets
  },
)

app.post<{ Body: { name: string; categoryId: number; status?: Status } }>(
  "/v1/pets",
  { schema: { body: json(createPet.requestBody?.content), response: responses(createPet, "201") } },
  async (request, reply) => {
    const { name, categoryId, status } = request.body
    const created = store.create(
      status === undefined ? { name, categoryId } : { name, categoryId, status },
    )
    return reply.code(201).header("Location", `/v1/pets/${created.id}`).send(created)
  },
)

app.get<{ Params: { petId: number } }>(
  "/v1/pets/:petId",
  {
    config: { deprecated: true },
    schema: { params: parameters(getPet, "path"), response: responses(getPet, "200") },
  },
  async (request, reply) => {
    const found = store.find(request.params.petId)
    if (found === undefined) return reply.code(404).send(petNotFound(request.params.petId))
    return found
  },
)

const { port, host } = listenAddress()
const address = await app.listen({ port, host })
announce(Number(new URL(address).port), host)
