import Router from "@koa/router"
import {
  createPet,
  getPet,
  IntFromString,
  listPets,
  ListPetsQuery,
  NewPet,
  PageCursor,
  Pet,
  PetId,
  type PetPage,
  type PetRepository,
  type StorageUnavailable,
} from "@petstore/core"
import { Cause, Effect, Either, Exit, Option, Schema, type ManagedRuntime } from "effect"
import type { Context } from "koa"
import { apiError, respondWithError } from "../api-error.js"
import { decodeRequest } from "../decode.js"
import { errorResponseOf, type DomainError } from "../error-mapping.js"
import { readJsonBody } from "../json-body.js"
import type { AuthState } from "../middleware/auth.js"

/** Runs the use cases; building its storage layer may fail only as `StorageUnavailable`. */
export type PetRuntime = ManagedRuntime.ManagedRuntime<PetRepository, StorageUnavailable>

const decodeQuery = decodeRequest(ListPetsQuery, "invalid_query")
const decodeNewPet = decodeRequest(NewPet, "invalid_body")
const decodePetId = decodeRequest(Schema.compose(IntFromString, PetId), "invalid_path_parameter")
const encodePet = Schema.encodeSync(Pet)
const encodeCursor = Schema.encodeSync(PageCursor)

/** Runs a use case; its failures are answered here, defects go on to the error handler. */
const runUseCase = async <A>(
  ctx: Context,
  runtime: PetRuntime,
  useCase: Effect.Effect<A, DomainError, PetRepository>,
): Promise<Option.Option<A>> => {
  const exit = await runtime.runPromiseExit(useCase)
  if (Exit.isSuccess(exit)) return Option.some(exit.value)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isNone(failure)) throw Cause.squash(exit.cause)
  const { error, headers } = errorResponseOf(failure.value)
  ctx.set(headers)
  respondWithError(ctx, error)
  return Option.none()
}

/** A query string where each parameter appears at most once, or the name of one that does not. */
const singleValued = (query: Context["query"]): Either.Either<Record<string, string>, string> => {
  const single: Record<string, string> = {}
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) return Either.left(name)
    if (value !== undefined) single[name] = value
  }
  return Either.right(single)
}

const nextLink = (basePath: string, query: ListPetsQuery, page: PetPage) =>
  Option.map(page.next, (lastId) => {
    const params = new URLSearchParams({ limit: String(query.limit) })
    if (query.status !== undefined) params.set("status", query.status)
    params.set("cursor", encodeCursor(lastId))
    return `<${basePath}/pets?${params}>; rel="next"`
  })

export const petRoutes = (runtime: PetRuntime, basePath: string) => {
  const router = new Router<AuthState>({ prefix: basePath })

  router.get("listPets", "/pets", async (ctx) => {
    const query = Either.flatMap(
      Either.mapLeft(singleValued(ctx.query), (name) =>
        apiError(400, "invalid_query", `${name} must be given at most once`),
      ),
      decodeQuery,
    )
    if (Either.isLeft(query)) return respondWithError(ctx, query.left)
    const page = await runUseCase(ctx, runtime, listPets(query.right))
    if (Option.isNone(page)) return
    const link = nextLink(basePath, query.right, page.value)
    if (Option.isSome(link)) ctx.set("Link", link.value)
    ctx.body = page.value.pets.map((pet) => encodePet(pet))
  })

  router.post("createPet", "/pets", async (ctx) => {
    const newPet = Either.flatMap(await readJsonBody(ctx), (body) =>
      typeof body === "object" && body !== null && !Array.isArray(body)
        ? decodeNewPet(body)
        : Either.left(apiError(400, "invalid_body", "the body must be a JSON object")),
    )
    if (Either.isLeft(newPet)) return respondWithError(ctx, newPet.left)
    const pet = await runUseCase(ctx, runtime, createPet(newPet.right))
    if (Option.isNone(pet)) return
    ctx.status = 201
    ctx.set("Location", `${basePath}/pets/${pet.value.id}`)
    ctx.body = encodePet(pet.value)
  })

  router.get("getPet", "/pets/:petId", async (ctx) => {
    const id = decodePetId(ctx.params["petId"])
    if (Either.isLeft(id)) {
      return respondWithError(ctx, apiError(400, id.left.code, `petId ${id.left.message}`))
    }
    const pet = await runUseCase(ctx, runtime, getPet(id.right))
    if (Option.isNone(pet)) return
    ctx.body = encodePet(pet.value)
  })

  return router
}
