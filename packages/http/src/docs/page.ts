import type { StaticAsset } from "./static-asset.js"

/**
 * Everything the page loads comes from this server. Swagger UI needs no more than that, except
 * `data:` images: its stylesheet draws icons with them.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ")

/**
 * Where the page links an asset: relative to the page (`docs/…` from `…/docs`), so the link
 * resolves under whatever prefix the page was reached by. The version in the query lets browsers
 * cache it for long.
 */
const assetUrl = (asset: StaticAsset): string => `docs/${asset.name}?v=${asset.version}`

export interface PageAssets {
  readonly stylesheets: ReadonlyArray<StaticAsset>
  readonly icons: ReadonlyArray<StaticAsset>
  readonly scripts: ReadonlyArray<StaticAsset>
}

const iconSize = (asset: StaticAsset) => /(\d+x\d+)\.png$/.exec(asset.name)?.[1] ?? "any"

/** The API reference page: a shell that Swagger UI fills with the OpenAPI document. */
export const docsPage = ({ stylesheets, icons, scripts }: PageAssets): string => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Petstore API reference</title>
${stylesheets.map((asset) => `    <link rel="stylesheet" href="${assetUrl(asset)}" />`).join("\n")}
${icons.map((asset) => `    <link rel="icon" type="${asset.contentType}" sizes="${iconSize(asset)}" href="${assetUrl(asset)}" />`).join("\n")}
  </head>
  <body>
    <div id="swagger-ui"></div>
${scripts.map((asset) => `    <script src="${assetUrl(asset)}"></script>`).join("\n")}
  </body>
</html>
`
