import type { Context } from "koa"
import type { ApiRouter } from "./router.js"
import { initializerScript } from "../docs/initializer.js"
import { contentSecurityPolicy, docsPage } from "../docs/page.js"
import type { StaticAsset } from "../docs/static-asset.js"
import { swaggerUiAssets, swaggerUiFileNames } from "../docs/swagger-ui-assets.js"

interface Site {
  readonly page: string
  readonly assets: ReadonlyMap<string, StaticAsset>
}

const buildSite = async (initializer: StaticAsset): Promise<Site> => {
  const packaged = await swaggerUiAssets()
  const ofType = (prefix: string) =>
    packaged.filter((asset) => asset.contentType.startsWith(prefix))
  return {
    page: docsPage({
      stylesheets: ofType("text/css"),
      icons: ofType("image/"),
      scripts: [...ofType("text/javascript"), initializer],
    }),
    assets: new Map([...packaged, initializer].map((asset) => [asset.name, asset])),
  }
}

const sendPage = (ctx: Context, page: string) => {
  ctx.set("Content-Security-Policy", contentSecurityPolicy)
  ctx.set("Cache-Control", "no-cache")
  ctx.set("X-Content-Type-Options", "nosniff")
  ctx.set("Referrer-Policy", "no-referrer")
  ctx.type = "text/html; charset=utf-8"
  ctx.body = page
}

/** Linked with its version the asset never changes, so it is cached for good; else revalidated. */
const sendAsset = (ctx: Context, asset: StaticAsset) => {
  ctx.status = 200
  ctx.set(
    "Cache-Control",
    ctx.query["v"] === asset.version ? "public, max-age=31536000, immutable" : "no-cache",
  )
  ctx.set("X-Content-Type-Options", "nosniff")
  ctx.etag = asset.version
  if (ctx.fresh) {
    ctx.status = 304
    return
  }
  ctx.type = asset.contentType
  ctx.body = asset.body
}

/**
 * `GET /docs`: the API reference, Swagger UI rendering `{basePath}/openapi.json`. Open to all.
 * Every file the page loads is served from here, so it works with no other network; only the
 * files it needs are served, by exact name.
 */
export const registerDocsRoutes = (router: ApiRouter, basePath: string): void => {
  const initializer = initializerScript(`${basePath}/openapi.json`)
  let site: Promise<Site> | undefined
  const loadSite = () => (site ??= buildSite(initializer))

  router.get("/docs", async (ctx) => {
    sendPage(ctx, (await loadSite()).page)
  })
  for (const name of [...swaggerUiFileNames, initializer.name]) {
    router.get(`/docs/${name}`, async (ctx) => {
      const asset = (await loadSite()).assets.get(name)
      if (asset !== undefined) sendAsset(ctx, asset)
    })
  }
}
