import type { Context } from "koa"
import type { ApiRouter } from "./router.js"
import { initializerFileName, initializerScript } from "../docs/initializer.js"
import { contentSecurityPolicy, docsPage } from "../docs/page.js"
import type { StaticAsset } from "../docs/static-asset.js"
import { swaggerUiAssets, swaggerUiFileNames } from "../docs/swagger-ui-assets.js"
import { mountPathOf, perMountPath } from "../request/mount-path.js"

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
 * files it needs are served, by exact name. The page links its files relative to itself, and
 * its initializer names the document under the mount path the page was asked by: one site is
 * built for each mount path, on first use.
 */
export const registerDocsRoutes = (router: ApiRouter, basePath: string): void => {
  const siteAt = perMountPath((mountPath) =>
    buildSite(initializerScript(`${mountPath}${basePath}/openapi.json`)),
  )

  router.get("/docs", async (ctx) => {
    sendPage(ctx, (await siteAt(mountPathOf(ctx))).page)
  })
  for (const name of [...swaggerUiFileNames, initializerFileName]) {
    router.get(`/docs/${name}`, async (ctx) => {
      const asset = (await siteAt(mountPathOf(ctx))).assets.get(name)
      if (asset !== undefined) sendAsset(ctx, asset)
    })
  }
}
