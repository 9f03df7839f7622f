import { staticAsset, type StaticAsset } from "./static-asset.js"

export const initializerFileName = "initializer.js"

/**
 * The script that starts Swagger UI on the page, served as a file so the page needs no inline
 * script. Swagger UI loads only `documentUrl`: its URL-from-query option and its online validator
 * (a request to validator.swagger.io) stay off, and authorizations live only as long as the page.
 */
export const initializerScript = (documentUrl: string): StaticAsset =>
  staticAsset(
    initializerFileName,
    "text/javascript; charset=utf-8",
    Buffer.from(`"use strict"
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(documentUrl)},
  dom_id: "#swagger-ui",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
  deepLinking: true,
  displayOperationId: true,
  displayRequestDuration: true,
  tryItOutEnabled: false,
  supportedSubmitMethods: ["get", "put", "post", "delete", "options", "head", "patch", "trace"],
  persistAuthorization: false,
  queryConfigEnabled: false,
  validatorUrl: null,
})
`),
  )
