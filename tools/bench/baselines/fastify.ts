/**
 * Baseline (b): the Petstore API in Fastify 5, as Fastify is meant to be used: JSON Schema
 * validation of query, path and body (Ajv; types coerced in the query and path only, never in
 * the body), responses serialized from their schemas (fast-json-stringify), an `onRequest`
 * hook for the key, and an error handler that turns every failure into the JSON Error body.
 *
 *   PORT=8082 PETSTORE_API_KEYS=key node --import tsx baselines/fastify.ts
 */
import { Ajv } from "ajv"
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from "fastify"
import {
  announce,
  apiKeys,
  decodeCursor,
  deprecationHeaders,
  errorBody,
  listenAddress,
  maxCursorLength,
  maxSafe,
  nextLink,
  petNotFound,
  refuseKey,
  seededStore,
  statuses,
  type ErrorBody,
  type Status,
} from "./pet-store.js"

const store = seededStore()
const keys = apiKeys()

const status = { type: "string", enum: statuses } as const
const pet = {
  type: "object",
  required: ["id", "name", "categoryId"],
  properties: {
    id: { type: "integer" },
    name: { type: "string" },
    categoryId: { type: "integer" },
    status,
  },
} as const
const newPet = {
  type: "object",
  required: ["name", "categoryId"],
  properties: {
    // 1 to 255 code points (Ajv counts them so), no U+0000, no unpaired surrogate.
    name: { type: "string", minLength: 1, maxLength: 255, pattern: "^[^\\u0000\\p{Cs}]*$" },
    categoryId: { type: "integer", minimum: -maxSafe, maximum: maxSafe },
    status,
  },
} as const
const errorResponse = {
  type: "object",
  required: ["code", "message", "status"],
  properties: {
    code: { type: "string" },
    message: { type: "string" },
    status: { type: "integer" },
  },
} as const

interface ListQuery {
  readonly limit: number
  readonly status?: Status
  readonly cursor?: string
}

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 })

// Coercing strings is what a query string and a path need, and what a JSON body must not get.
const coercing = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: true })
const strict = new Ajv({ coerceTypes: false, allErrors: true })
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
      return errorBody(413, "payload_too_large", "the body exceeds 1048576 bytes")
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
      querystring: {
        type: "object",
        properties: {
          limit: { type: "integer", minimum: 1, maximum: 100, default: 20 },
          status,
          cursor: { type: "string", maxLength: maxCursorLength },
        },
      },
      response: { 200: { type: "array", items: pet }, "4xx": errorResponse },
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
  { schema: { body: newPet, response: { 201: pet, "4xx": errorResponse } } },
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
    schema: {
      params: {
        type: "object",
        required: ["petId"],
        properties: { petId: { type: "integer", minimum: 1, maximum: maxSafe } },
      },
      response: { 200: pet, "4xx": errorResponse },
    },
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
