import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { staticAsset, type StaticAsset } from "./static-asset.js"

/** The only files of `swagger-ui-dist` the page uses; no other file of the package is served. */
const allowList = new Map([
  ["swagger-ui.css", "text/css; charset=utf-8"],
  ["index.css", "text/css; charset=utf-8"],
  ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
  ["favicon-32x32.png", "image/png"],
  ["favicon-16x16.png", "image/png"],
])

export const swaggerUiFileNames: ReadonlyArray<string> = [...allowList.keys()]

const packageDirectory = () =>
  dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))

let loaded: Promise<ReadonlyArray<StaticAsset>> | undefined

/** The allowed files from the installed `swagger-ui-dist`, read once per process on first use. */
export const swaggerUiAssets = (): Promise<ReadonlyArray<StaticAsset>> => {
  loaded ??= Promise.all(
    [...allowList].map(async ([name, contentType]) =>
      staticAsset(name, contentType, await readFile(join(packageDirectory(), name))),
    ),
  )
  return loaded
}
