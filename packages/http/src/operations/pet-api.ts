import {
  defaultLimit,
  IntFromString,
  Limit,
  ListPetsQuery,
  maxLimit,
  NewPet,
  PageCursor,
  Pet,
  PetId,
  PetStatus,
} from "@petstore/core"
import { Schema } from "effect"
import { IdempotencyKeyHeader } from "./idempotency-key-header.js"
import { defineOperation, noBody, noHeaders, noParameters } from "./operation.js"

// The Petstore's operations as declarations: data only, no use case imported. Their handlers are
// in `pet-handlers.ts`; `pet-operations.ts` joins each to its handler, in the one list.

/** A page of animals: at most `limit` of them, so never more than the largest limit. */
export const Pets = Schema.Array(Pet).pipe(Schema.maxItems(maxLimit)).annotations({
  identifier: "Pets",
  description: "A page of animals, in ascending `id` order.",
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
    headers: { Link: "NextPageLink" },
  },
  failures: { StorageUnavailable: true },
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
  },
  success: {
    status: 201,
    description:
      "The animal was added: the fields sent, plus the `id` assigned. A replay answers the animal the first create with the key added.",
    schema: Pet,
    headers: { Location: "Location", "Idempotent-Replayed": "IdempotentReplayed" },
  },
  failures: { StorageUnavailable: true, IdempotencyKeyReused: true, IdempotencyKeyInUse: true },
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
  success: { status: 200, description: "The animal.", schema: Pet },
  failures: { PetNotFound: true, StorageUnavailable: true },
})
