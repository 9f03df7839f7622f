/**
 * Baseline (a): the Petstore API in Koa 3 + @koa/router as one would write it by hand
 * (`koa-app.ts`), with nothing around it.
 *
 *   PORT=8081 PETSTORE_API_KEYS=key node --import tsx baselines/koa.ts
 */
import { serveKoaPetstore } from "./koa-app.js"
import { apiKeys } from "./pet-store.js"

serveKoaPetstore({ isKey: apiKeys(), onError: (error) => console.error(error) })
