import createClient, { type Client } from "openapi-fetch"
import type { components, paths } from "./schema.js"

export type { components, operations, paths } from "./schema.js"

type Schemas = components["schemas"]
export type Pet = Schemas["Pet"]
export type NewPet = Schemas["NewPet"]
export type PetStatus = Schemas["PetStatus"]
/** The body of every error response (`Error` in the OpenAPI document). */
export type ApiError = Schemas["Error"]

export interface PetstoreClientOptions {
  /** The API's base URL, ending in its version segment: `https://petstore.example.com/v1`. */
  readonly baseUrl: string
  /** Sent with every request as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string
  /** Makes the requests; `globalThis.fetch` unless given. */
  readonly fetch?: (request: Request) => Promise<Response>
}

export type PetstoreClient = Client<paths>

/**
 * A client whose paths, parameters, bodies and responses are typed from the OpenAPI document:
 * `client.GET("/pets", { params: { query: { status: "sold" } } })`.
 */
export const createPetstoreClient = (options: PetstoreClientOptions): PetstoreClient =>
  createClient<paths>({
    baseUrl: options.baseUrl,
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })
