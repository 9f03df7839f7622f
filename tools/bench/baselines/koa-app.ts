/**
 * The Petstore API in Koa 3 + @koa/router as one would write it by hand: an error handler, an
 * auth middleware per route (after the deprecation headers of getPet), hand-written checks, JSON
 * errors, and a key-checked JSON 404 for every other path. Shared by the bare Koa baseline and
 * the operated one, which wraps it in its own per-request work.
 *
 * It uses none of the service's code (see pet-store.ts for the store, the checks and the
 * constants): not `createApp`'s middleware, codecs or router either, since what the service's
 * Koa stack costs over a hand-written one is the question these baselines answer.
 */
import Router from "@koa/router"
import Koa, { type Middleware } from "koa"
import {
  announce,
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

export interface KoaPetstoreOptions {
  /** Whether a bearer token is a key. */
  readonly isKey: ReadonlySet<string> | ((token: string) => boolean)
  /** Told of whatever a route threw, before the 500 is answered. */
  readonly onError: (error: unknown) => void
  /** Middleware run before everything else, outermost first. */
  readonly around?: ReadonlyArray<Middleware>
  /** Routes of the baseline's own, beside the API's. */
  readonly extraRoutes?: Router
}

/** The baseline's Koa app, listening on `PORT` and `HOST`; announces itself as the runner expects. */
export const serveKoaPetstore = (options: KoaPetstoreOptions): void => {
  const store = seededStore()

  const fail = (ctx: Koa.Context, error: ErrorBody) => {
    ctx.status = error.status
    ctx.body = error
  }

  /** Answers 401 and true when the request bears no known key. */
  const refused = (ctx: Koa.Context): boolean => {
    const refusal = refuseKey(ctx.get("Authorization"), options.isKey)
    if (refusal === undefined) return false
    ctx.set("WWW-Authenticate", refusal.challenge)
    fail(ctx, refusal.body)
    return true
  }

  const auth: Middleware = async (ctx, next) => {
    if (refused(ctx)) return
    ctx.set("Cache-Control", "no-store")
    await next()
  }

  /** Every failure, and the router's empty 404 and 405, as the JSON Error body. */
  const jsonErrors: Middleware = async (ctx, next) => {
    try {
      await next()
    } catch (error) {
      options.onError(error)
      return fail(ctx, errorBody(500, "internal_error", "an unexpected error occurred"))
    }
    if (ctx.body !== undefined && ctx.body !== null) return
    if (refused(ctx)) return
    ctx.set("Cache-Control", "no-store")
    if (ctx.status === 405)
      fail(ctx, errorBody(405, "method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}`))
    else fail(ctx, errorBody(404, "not_found", `nothing is at ${ctx.path}`))
  }

  const deprecated: Middleware = async (ctx, next) => {
    ctx.set(deprecationHeaders)
    await next()
  }

  const router = new Router({ prefix: "/v1", strict: true, sensitive: true })

  router.get("/pets", auth, (ctx) => {
    const query = checkListQuery({
      limit: ctx.query["limit"],
      status: ctx.query["status"],
      cursor: ctx.query["cursor"],
    })
    if (isErrorBody(query)) return fail(ctx, query)
    const page = store.list(query.limit, query.status, query.afterId)
    if (page.next !== undefined) ctx.set("Link", nextLink(query.limit, query.status, page.next))
    ctx.body = page.pets
  })

  router.post("/pets", auth, async (ctx) => {
    const refused = refuseBodyHeaders(ctx.req)
    if (refused !== undefined) return fail(ctx, refused)
    const text = await readBody(ctx.req)
    if (typeof text !== "string") return fail(ctx, text)
    const parsed = parseJson(text)
    if (isErrorBody(parsed)) return fail(ctx, parsed)
    const newPet = checkNewPet(parsed.value)
    if (isErrorBody(newPet)) return fail(ctx, newPet)
    const pet = store.create(newPet)
    ctx.status = 201
    ctx.set("Location", `/v1/pets/${pet.id}`)
    ctx.body = pet
  })

  router.get("/pets/:petId", deprecated, auth, (ctx) => {
    const text = ctx.params["petId"] ?? ""
    const id = parsePetId(text)
    if (id === undefined) return fail(ctx, invalidPetId(text))
    const pet = store.find(id)
    if (pet === undefined) return fail(ctx, petNotFound(id))
    ctx.body = pet
  })

  const app = new Koa()
  for (const middleware of options.around ?? []) app.use(middleware)
  app.use(jsonErrors)
  if (options.extraRoutes !== undefined) app.use(options.extraRoutes.routes())
  app.use(router.routes())
  app.use(router.allowedMethods())

  const { port, host } = listenAddress()
  const server = app.listen(port, host, () => {
    const address = server.address()
    announce(typeof address === "object" && address !== null ? address.port : port, host)
  })
}
