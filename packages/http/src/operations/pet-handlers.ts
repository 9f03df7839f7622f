import {
  createPet,
  cursorAfter,
  getPet,
  IdempotencyScope,
  listPets,
  type ListPetsQuery,
  type PetPage,
} from "@petstore/core"
import { Effect, Option } from "effect"
import { idempotentReplayedHeader } from "../vocabulary/headers.js"
import type { Handler } from "./operation.js"
import { createPetOperation, getPetOperation, listPetsOperation } from "./pet-api.js"

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

export const listPetsHandler: Handler<typeof listPetsOperation> = ({ query }, { basePath }) =>
  Effect.map(listPets(query), (page) => ({
    value: page.pets,
    headers: Option.match(nextPageLink(basePath, query, page), {
      onNone: () => ({}),
      onSome: (link) => ({ Link: link }),
    }),
  }))

export const createPetHandler: Handler<typeof createPetOperation> = (
  { body, headers },
  { basePath, principal },
) => {
  const key = headers["Idempotency-Key"]
  const idempotency =
    key === undefined || Option.isNone(principal)
      ? undefined
      : { key, scope: IdempotencyScope.make(principal.value.keyId) }
  return Effect.map(createPet(body, idempotency), ({ pet, replayed }) => ({
    value: pet,
    headers: {
      Location: `${basePath}/pets/${pet.id}`,
      ...(replayed ? { [idempotentReplayedHeader]: "true" } : {}),
    },
  }))
}

export const getPetHandler: Handler<typeof getPetOperation> = ({ params }) =>
  Effect.map(getPet(params.petId), (pet) => ({ value: pet }))
