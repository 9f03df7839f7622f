/**
 * Baseline (d): the Petstore API on plain `node:http`: one request handler, routing by hand,
 * the same hand-written checks as the Koa baseline, JSON written with `JSON.stringify`. The floor
 * of the comparison, and of a lone durable create (lone-creates.ts): what serving this API over
 * Node's `http` costs with no framework, no Effect and no schema library. It shares nothing with
 * the service (see pet-store.ts): its memory is reported beside the service's, and loading
 * effect would add some 42 MiB to it.
 *
 *   PORT=8083 PETSTORE_API_KEYS=key node --import tsx baselines/node-http.ts
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import {
  announce,
  apiKeys,
  checkListQuery,
  checkNewPet,
  deprecationHeaders,
  errorBody,
  invalidPetId,
  isErrorBody,
  listenAddress,
  nextLink,
  parseJson,
  parsePetId,
  petNotFound,
  readBody,
  refuseBodyHeaders,
  refuseKey,
  seededStore,
  type ErrorBody,
} from "./pet-store.js"

const store = seededStore()
const keys = apiKeys()

const send = (response: ServerResponse, status: number, value: unknown) => {
  const text = JSON.stringify(value)
  response.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
  })
  response.end(text)
}

const fail = (response: ServerResponse, error: ErrorBody) => send(response, error.status, error)

/** Answers 401 and returns true when the request bears no known key. */
const refused = (request: IncomingMessage, response: ServerResponse): boolean => {
  const refusal = refuseKey(request.headers.authorization, keys)
  if (refusal === undefined) return false
  response.setHeader("WWW-Authenticate", refusal.challenge)
  fail(response, refusal.body)
  return true
}

const listPets = (query: URLSearchParams, response: ServerResponse) => {
  const all = (name: string) => {
    const values = query.getAll(name)
    return values.length > 1 ? values : values[0]
  }
  const checked = checkListQuery({
    limit: all("limit"),
    status: all("status"),
    cursor: all("cursor"),
  })
  if (isErrorBody(checked)) return fail(response, checked)
  const page = store.list(checked.limit, checked.status, checked.afterId)
  if (page.next !== undefined)
    response.setHeader("Link", nextLink(checked.limit, checked.status, page.next))
  send(response, 200, page.pets)
}

const createPet = async (request: IncomingMessage, response: ServerResponse) => {
  const refusedBody = refuseBodyHeaders(request)
  if (refusedBody !== undefined) return fail(response, refusedBody)
  const text = await readBody(request)
  if (typeof text !== "string") return fail(response, text)
  const parsed = parseJson(text)
  if (isErrorBody(parsed)) return fail(response, parsed)
  const newPet = checkNewPet(parsed.value)
  if (isErrorBody(newPet)) return fail(response, newPet)
  const pet = store.create(newPet)
  response.setHeader("Location", `/v1/pets/${pet.id}`)
  send(response, 201, pet)
}

const getPet = (petId: string, response: ServerResponse) => {
  const id = parsePetId(petId)
  if (id === undefined) return fail(response, invalidPetId(petId))
  const pet = store.find(id)
  if (pet === undefined) return fail(response, petNotFound(id))
  send(response, 200, pet)
}

const petPath = /^\/v1\/pets\/([^/]+)$/

const handle = async (request: IncomingMessage, response: ServerResponse) => {
  // The path exactly as sent (no dot-segment or percent-decoding), as the service matches it.
  const target = request.url ?? "/"
  const queryStart = target.indexOf("?")
  const path = queryStart === -1 ? target : target.slice(0, queryStart)
  const query = new URLSearchParams(queryStart === -1 ? "" : target.slice(queryStart + 1))
  const method = request.method ?? "GET"
  const petId = petPath.exec(path)?.[1]
  if (petId !== undefined) {
    for (const [name, value] of Object.entries(deprecationHeaders)) response.setHeader(name, value)
  }
  if (refused(request, response)) return
  response.setHeader("Cache-Control", "no-store")
  if (path === "/v1/pets" && method === "GET") return listPets(query, response)
  if (path === "/v1/pets" && method === "POST") return createPet(request, response)
  if (petId !== undefined && method === "GET") return getPet(petId, response)
  if (path === "/v1/pets" || petId !== undefined) {
    response.setHeader("Allow", petId === undefined ? "GET, POST" : "GET")
    return fail(
      response,
      errorBody(405, "method_not_allowed", `${method} is not allowed on ${path}`),
    )
  }
  fail(response, errorBody(404, "not_found", `nothing is at ${path}`))
}

const server = createServer((request, response) => {
  handle(request, response).catch((error: unknown) => {
    console.error(error)
    if (!response.headersSent)
      fail(response, errorBody(500, "internal_error", "an unexpected error occurred"))
  })
})

const { port, host } = listenAddress()
server.listen(port, host, () => {
  const address = server.address()
  announce(typeof address === "object" && address !== null ? address.port : port, host)
})
