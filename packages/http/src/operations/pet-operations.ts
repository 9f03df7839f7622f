import {
  createPet,
  cursorAfter,
  defaultLimit,
  IdempotencyScope,
  getPet,
  IntFromString,
  Limit,
  listPets,
  ListPetsQuery,
  NewPet,
  PageCursor,
  Pet,
  PetId,
  PetStatus,
  plainNewPet,
  type PetPage,
} from "@petstore/core"
import { Effect, Option, Schema } from "effect"
import { IdempotencyKeyHeader } from "./idempotency-key-header.js"
import { petJson, petsJson } from "./pet-json.js"
import { defineOperation, noBody, noHeaders, noParameters, type Operation } from "./operation.js"

const Pets = Schema.Array(Pet).annotations({
  identifier: "Pets",
  description: "A page of animals, in ascending `id` order.",
})

/**
 * `Link: <…>; rel="next"` while more pets match: the same query from after the page's last pet.
 * Written out rather than through URLSearchParams: a limit, a status and a base64url cursor
 * have nothing to escape.
 */
const nextPageLink = (basePath: string, query: ListPetsQuery, page: PetPage) =>
  Option.map(page.next, (lastId) => {
    const status = query.status === undefined ? "" : `&status=${query.status}`
    return `<${basePath}/pets?limit=${query.limit}${status}&cursor=${cursorAfter(lastId)}>; rel="next"`
  })

export const listPetsOperation = defineOperation({
  id: "listPets",
  method: "GET",
  path: "/pets",
  summary: "List animals",
  description:
    'Animals in ascending `id` order, at most `limit` of them, only those with `status` when it is given. While more remain, the `Link` header names the next page (`rel="next"`). Query parameters other than these are ignored; one given twice is refused.',
  tags: ["pets"],
  requiresKey: true,
  params: noParameters,
  query: {
    schema: ListPetsQuery,
    parameters: {
      limit: {
        schema: Limit.annotations({ identifier: "Limit", default: defaultLimit }),
        description: `Maximum number of animals returned; ${defaultLimit} when omitted.`,
      },
      status: { schema: PetStatus, description: "Only animals with this status." },
      cursor: {
        schema: PageCursor,
        description:
          'Where the page starts: the value a previous page\'s `Link: rel="next"` carries, unchanged. A value that is not a cursor is refused with 400.',
      },
    },
  },
  headers: noHeaders,
  body: noBody,
  success: {
    status: 200,
    description: "A page of animals.",
    schema: Pets,
    json: petsJson,
    headers: { Link: "NextPageLink" },
  },
  failures: { StorageUnavailable: true },
  run: ({ query }, { basePath }) =>
    Effect.map(listPets(query), (page) => ({
      value: page.pets,
      headers: Option.match(nextPageLink(basePath, query, page), {
        onNone: () => ({}),
        onSome: (link) => ({ Link: link }),
      }),
    })),
})

export const createPetOperation = defineOperation({
  id: "createPet",
  method: "POST",
  path: "/pets",
  summary: "Add an animal",
  description:
    "Stores the animal under a new `id` and answers with it. Send an `Idempotency-Key` to make the create safe to retry: a retry with the same key and the same animal answers what the first did, and never stores a second animal.",
  tags: ["pets"],
  requiresKey: true,
  params: noParameters,
  query: noParameters,
  headers: {
    schema: Schema.Struct({ "Idempotency-Key": Schema.optional(IdempotencyKeyHeader) }),
    parameters: {
      "Idempotency-Key": {
        schema: Schema.String.annotations({
          description:
            'A key of your choosing (a UUID, say) naming this create: 1 to 255 visible ASCII characters without `"` or `\\`, as a quoted string (`"8e03978e-40d5-43e8-bc93-6894a57f9324"`) or unquoted. Keys are kept for a day, per API key.',
          jsonSchema: {
            pattern:
              '^(?:"[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,255}"|[\\x21\\x23-\\x5B\\x5D-\\x7E]{1,255})$',
          },
        }),
        description:
          "Makes the create safe to retry (draft-ietf-httpapi-idempotency-key-header). A retry with the same key and the same animal answers 201 with the same body and `Location`, plus `Idempotent-Replayed: true`; the same key with another animal is 422; while the first create with the key is in flight, 409.",
      },
    },
    invalid: "invalid_idempotency_key",
  },
  body: {
    schema: NewPet,
    description: "The animal to add. Properties other than these are ignored.",
    read: true,
    plain: plainNewPet,
  },
  success: {
    status: 201,
    description:
      "The animal was added: the fields sent, plus the `id` assigned. A replay answers the animal the first create with the key added.",
    schema: Pet,
    json: petJson,
    headers: { Location: "Location", "Idempotent-Replayed": "IdempotentReplayed" },
  },
  failures: { StorageUnavailable: true, IdempotencyKeyReused: true, IdempotencyKeyInUse: true },
  run: ({ body, headers }, { basePath, principal }) => {
    const key = headers["Idempotency-Key"]
    const idempotency =
      key === undefined || Option.isNone(principal)
        ? undefined
        : { key, scope: IdempotencyScope.make(principal.value.keyId) }
    return Effect.map(createPet(body, idempotency), ({ pet, replayed }) => ({
      value: pet,
      headers: {
        Location: `${basePath}/pets/${pet.id}`,
        ...(replayed ? { "Idempotent-Replayed": "true" } : {}),
      },
    }))
  },
})

export const getPetOperation = defineOperation({
  id: "getPet",
  method: "GET",
  path: "/pets/{petId}",
  summary: "Get an animal",
  description: "Deprecated: use `GET /pets` with a `status` filter instead.",
  tags: ["pets"],
  requiresKey: true,
  deprecation: {
    // This implementation's first release.
    since: new Date("2026-11-22T00:00:00Z"),
    sunset: new Date("2030-12-05T00:00:00Z"),
    successor: "/pets",
  },
  params: {
    schema: Schema.Struct({ petId: Schema.compose(IntFromString, PetId) }),
    parameters: { petId: { schema: PetId, description: "The animal's identifier." } },
  },
  query: noParameters,
  headers: noHeaders,
  body: noBody,
  success: { status: 200, description: "The animal.", schema: Pet, json: petJson },
  failures: { PetNotFound: true, StorageUnavailable: true },
  run: ({ params }) => Effect.map(getPet(params.petId), (pet) => ({ value: pet })),
})

/** Every operation of the API, in the order the document lists them. */
export const petOperations: ReadonlyArray<Operation> = [
  listPetsOperation,
  createPetOperation,
  getPetOperation,
]
