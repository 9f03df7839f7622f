/**
 * What the Koa and node:http baselines share (and Fastify in part): the service's in-memory data
 * structure written plainly (a Map by id, an id-ordered array of every pet and one per status, a
 * binary search for the cursor), the cursor format, hand-written checks, and the service's fixed
 * texts (error bodies, headers). Nothing here imports the service, for three reasons:
 *
 * - The store. `MemoryPetRepository` (`@petstore/storage`) answers through Effect: each call
 *   would run a fiber (`Effect.runSync`) and make a `Pet` class instance. Those are costs of the
 *   service's design, and the Effect run alone is 6–11 µs of a request in its profiles: the very
 *   thing the baselines are there to show. `PetStore` below keeps the same data structure and
 *   the same O(log n + limit) pages, so the store's own work is equal on both sides.
 * - The checks. The service decodes through effect/Schema (`NewPet`, `ListPetsQuery`); a Koa or
 *   node:http service written by hand checks by hand, and what that costs is what these
 *   baselines stand for. (Fastify validates with the service's schemas, compiled by its own
 *   Ajv: see fastify.ts.)
 * - The constants (statuses, limits, the cursor format, the error texts). Importing
 *   `@petstore/core` for them loads effect: about 42 MiB more RSS and 15 MiB more heap at start
 *   in Node 20. That would show in the node:http baseline's reported memory ("RSS before" of the
 *   memory per stored pet) and put effect's modules in the heap of servers that stand for code
 *   without it. The probes of http-bench-checks.ts hold every baseline to the service's
 *   answers (status, error code, headers, success bodies) before each run, so these copies
 *   cannot drift unnoticed.
 */
import type { IncomingMessage } from "node:http"

export const statuses = ["available", "pending", "sold"] as const
export type Status = (typeof statuses)[number]

export interface NewPet {
  readonly name: string
  readonly categoryId: number
  readonly status?: Status
}

export interface Pet extends NewPet {
  readonly id: number
}

export interface Page {
  readonly pets: ReadonlyArray<Pet>
  /** The id the next page starts after, when more pets match. */
  readonly next: number | undefined
}

/** Index of the first pet of `pets` (ascending ids) whose id is greater than `id`. */
const indexAfter = (pets: ReadonlyArray<Pet>, id: number): number => {
  let low = 0
  let high = pets.length
  while (low < high) {
    const middle = (low + high) >>> 1
    const middleId = pets[middle]?.id ?? Number.POSITIVE_INFINITY
    if (middleId <= id) low = middle + 1
    else high = middle
  }
  return low
}

export class PetStore {
  private readonly byId = new Map<number, Pet>()
  private readonly all: Array<Pet> = []
  private readonly byStatus = new Map<Status, Array<Pet>>(statuses.map((status) => [status, []]))
  private lastId = 0

  create(newPet: NewPet): Pet {
    this.lastId += 1
    const pet: Pet =
      newPet.status === undefined
        ? { id: this.lastId, name: newPet.name, categoryId: newPet.categoryId }
        : {
            id: this.lastId,
            name: newPet.name,
            categoryId: newPet.categoryId,
            status: newPet.status,
          }
    this.byId.set(pet.id, pet)
    this.all.push(pet)
    if (pet.status !== undefined) this.byStatus.get(pet.status)?.push(pet)
    return pet
  }

  find(id: number): Pet | undefined {
    return this.byId.get(id)
  }

  list(limit: number, status: Status | undefined, afterId: number | undefined): Page {
    const listing = status === undefined ? this.all : (this.byStatus.get(status) ?? [])
    const start = afterId === undefined ? 0 : indexAfter(listing, afterId)
    const pets = listing.slice(start, start + limit)
    const last = pets[pets.length - 1]
    return { pets, next: listing.length > start + limit ? last?.id : undefined }
  }
}

/** Pet i of the seed (from 1): `pet <i>`, category i, statuses cycling available, pending, sold, none. */
export const seedPet = (i: number): NewPet => {
  const status = statuses[(i - 1) % 4]
  return status === undefined
    ? { name: `pet ${i}`, categoryId: i }
    : { name: `pet ${i}`, categoryId: i, status }
}

/** A store holding `BENCH_SEED` pets (none by default; the runner seeds through the API). */
export const seededStore = (): PetStore => {
  const store = new PetStore()
  const count = Number(process.env["BENCH_SEED"] ?? "0")
  for (let i = 1; i <= count; i++) store.create(seedPet(i))
  return store
}

export const maxBodyBytes = 1024 * 1024
export const maxCursorLength = 200

/** The cursor the service issues: base64url, unpadded, of `after:<id>`. */
export const encodeCursor = (id: number): string => Buffer.from(`after:${id}`).toString("base64url")

/** The id a cursor names, or undefined when the text is not a cursor. */
export const decodeCursor = (cursor: string): number | undefined => {
  if (cursor.length > maxCursorLength || !/^[A-Za-z0-9_-]*$/.test(cursor)) return undefined
  const match = /^after:([1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, "base64url").toString())
  const id = Number(match?.[1])
  return Number.isSafeInteger(id) && id > 0 ? id : undefined
}

export const nextLink = (limit: number, status: Status | undefined, afterId: number): string => {
  const params = new URLSearchParams({ limit: String(limit) })
  if (status !== undefined) params.set("status", status)
  params.set("cursor", encodeCursor(afterId))
  return `</v1/pets?${params}>; rel="next"`
}

export const deprecationHeaders = {
  Deprecation: "@1795305600",
  Sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  Link: '</v1/pets>; rel="successor-version"',
} as const

export interface ErrorBody {
  readonly code: string
  readonly message: string
  readonly status: number
}

export const errorBody = (status: number, code: string, message: string): ErrorBody => ({
  code,
  message,
  status,
})

export const realm = 'Bearer realm="petstore"'

const bearer = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** Why an Authorization header is refused, with its challenge; undefined when the key is known. */
export const refuseKey = (
  header: string | undefined,
  keys: ReadonlySet<string> | ((token: string) => boolean),
): { readonly challenge: string; readonly body: ErrorBody } | undefined => {
  const token = header === undefined ? undefined : bearer.exec(header)?.[1]
  if (token === undefined) {
    const message =
      header === undefined || header === ""
        ? "an API key is required: send it as Authorization: Bearer <key>"
        : "the Authorization header must have the form Bearer <key>"
    return { challenge: realm, body: errorBody(401, "unauthorized", message) }
  }
  if (typeof keys === "function" ? keys(token) : keys.has(token)) return undefined
  return {
    challenge: `${realm}, error="invalid_token"`,
    body: errorBody(401, "unauthorized", "the API key is not valid"),
  }
}

export const apiKeys = (): ReadonlySet<string> =>
  new Set(
    (process.env["PETSTORE_API_KEYS"] ?? "")
      .split(",")
      .map((key) => key.trim())
      .filter((key) => key !== ""),
  )

const integerText = /^-?[0-9]+$/
const isStatus = (value: unknown): value is Status =>
  typeof value === "string" && (statuses as ReadonlyArray<string>).includes(value)

export interface ListQuery {
  readonly limit: number
  readonly status: Status | undefined
  readonly afterId: number | undefined
}

type QueryValue = string | ReadonlyArray<string> | undefined

/** The listPets query checked by hand, or the 400 naming each bad parameter. */
export const checkListQuery = (query: {
  readonly limit: QueryValue
  readonly status: QueryValue
  readonly cursor: QueryValue
}): ListQuery | ErrorBody => {
  const problems: Array<string> = []
  const single = (name: string, value: QueryValue): string | undefined => {
    if (typeof value === "string" || value === undefined) return value
    problems.push(`${name} must be given once`)
    return undefined
  }
  const limitText = single("limit", query.limit)
  const statusText = single("status", query.status)
  const cursorText = single("cursor", query.cursor)
  const limit = limitText === undefined ? 20 : Number(limitText)
  if (
    limitText !== undefined &&
    (!integerText.test(limitText) || !Number.isInteger(limit) || limit < 1 || limit > 100)
  )
    problems.push("limit must be an integer from 1 to 100")
  if (statusText !== undefined && !isStatus(statusText))
    problems.push('status must be one of "available", "pending", "sold"')
  const afterId = cursorText === undefined ? undefined : decodeCursor(cursorText)
  if (cursorText !== undefined && afterId === undefined) problems.push("cursor is not a cursor")
  if (problems.length > 0) return errorBody(400, "invalid_query", problems.join("; "))
  return { limit, status: isStatus(statusText) ? statusText : undefined, afterId }
}

/** A path's petId, or undefined when it is not a positive safe integer in decimal. */
export const parsePetId = (text: string): number | undefined => {
  const id = Number(text)
  return integerText.test(text) && Number.isSafeInteger(id) && id > 0 ? id : undefined
}

export const invalidPetId = (text: string): ErrorBody =>
  errorBody(
    400,
    "invalid_path_parameter",
    integerText.test(text)
      ? "petId must be a positive integer no greater than 9007199254740991"
      : "petId must be an integer",
  )

export const petNotFound = (id: number): ErrorBody =>
  errorBody(404, "pet_not_found", `no pet has id ${id}`)

const loneSurrogate = /\p{Surrogate}/u

/** A name as the service takes it: 1 to 255 code points, no U+0000, no unpaired surrogate. */
export const isPetName = (name: string): boolean => {
  const length = [...name].length
  return length >= 1 && length <= 255 && !name.includes("\u0000") && !loneSurrogate.test(name)
}

/** A parsed JSON body checked by hand as a NewPet (unknown properties dropped), or the 400. */
export const checkNewPet = (body: unknown): NewPet | ErrorBody => {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return errorBody(400, "invalid_body", "the body must be a JSON object")
  const name = "name" in body ? body.name : undefined
  const categoryId = "categoryId" in body ? body.categoryId : undefined
  const status = "status" in body ? body.status : undefined
  if (
    typeof name === "string" &&
    isPetName(name) &&
    typeof categoryId === "number" &&
    Number.isSafeInteger(categoryId)
  ) {
    if (status === undefined) return { name, categoryId }
    if (isStatus(status)) return { name, categoryId, status }
  }
  const problems: Array<string> = []
  if (name === undefined) problems.push("name is missing")
  else if (typeof name !== "string" || !isPetName(name))
    problems.push("name must be a string of 1 to 255 Unicode characters, without U+0000")
  if (categoryId === undefined) problems.push("categoryId is missing")
  else if (typeof categoryId !== "number" || !Number.isSafeInteger(categoryId))
    problems.push("categoryId must be an integer between -9007199254740991 and 9007199254740991")
  if (status !== undefined && !isStatus(status))
    problems.push('status must be one of "available", "pending", "sold"')
  return errorBody(400, "invalid_body", problems.join("; "))
}

export const isErrorBody = (value: object): value is ErrorBody => "code" in value

/** Why a request's headers rule out a JSON body, as the service decides it. */
export const refuseBodyHeaders = (req: IncomingMessage): ErrorBody | undefined => {
  const lengthHeader = req.headers["content-length"]
  const length = lengthHeader === undefined ? undefined : Number(lengthHeader)
  if (length === 0 || (length === undefined && req.headers["transfer-encoding"] === undefined))
    return errorBody(
      400,
      "invalid_body",
      'a JSON object body is required, for example {"name": "Rex", "categoryId": 1}',
    )
  const [mediaType = "", ...parameters] = (req.headers["content-type"] ?? "").split(";")
  const type = mediaType.trim().toLowerCase()
  if (type !== "application/json" && !/^[a-z0-9!#$&^_.-]+\/[a-z0-9!#$&^_.-]+\+json$/.test(type))
    return errorBody(
      415,
      "unsupported_media_type",
      "the body must be sent as Content-Type: application/json",
    )
  const charset = parameters
    .map((parameter) => parameter.trim().toLowerCase())
    .find((parameter) => parameter.startsWith("charset="))
    ?.slice("charset=".length)
    .replace(/^"|"$/g, "")
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8")
    return errorBody(
      415,
      "unsupported_media_type",
      `charset ${charset} is not supported; send UTF-8`,
    )
  const encoding = (req.headers["content-encoding"] ?? "").toLowerCase()
  if (encoding !== "" && encoding !== "identity")
    return errorBody(
      415,
      "unsupported_media_type",
      `Content-Encoding ${encoding} is not supported; send the body unencoded`,
    )
  if (length !== undefined && length > maxBodyBytes)
    return errorBody(413, "payload_too_large", `the body exceeds ${maxBodyBytes} bytes`)
  return undefined
}

/** Reads at most 1 MiB of body as UTF-8; resolves to the 413 when it is longer. */
export const readBody = (req: IncomingMessage): Promise<string | ErrorBody> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        req.removeAllListeners("data")
        req.resume()
        resolve(errorBody(413, "payload_too_large", `the body exceeds ${maxBodyBytes} bytes`))
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf-8")))
    req.on("error", reject)
  })

/** A body's text parsed as JSON, or the 400 the service answers. */
export const parseJson = (text: string): { readonly value: unknown } | ErrorBody => {
  if (text.trim() === "")
    return errorBody(
      400,
      "invalid_body",
      'a JSON object body is required, for example {"name": "Rex", "categoryId": 1}',
    )
  try {
    const value: unknown = JSON.parse(text)
    return { value }
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message : "it could not be parsed"
    return errorBody(400, "invalid_json", `the body is not valid JSON: ${reason}`)
  }
}

/** The start-up line the runner waits for, in the service's words. */
export const announce = (port: number, host: string): void => {
  process.stdout.write(
    `${JSON.stringify({ level: "info", message: "petstore listening", url: `http://${host}:${port}/v1` })}\n`,
  )
}

export const listenAddress = () => ({
  port: Number(process.env["PORT"] ?? "0"),
  host: process.env["HOST"] ?? "127.0.0.1",
})
