import { Schema } from "effect"
import { bearerTokenPattern } from "@petstore/http"
import { fromEnv, fromSchema, optionalSetting, type Reading } from "./setting.js"
import { CommaSeparated } from "./values.js"

/** The keys, as bearer tokens can carry them. They are secrets: a refusal says which, never what. */
const apiKeys: Reading<ReadonlyArray<string>> = fromSchema(
  CommaSeparated.pipe(
    Schema.filter((keys) => {
      const unusable = keys.findIndex((key) => !bearerTokenPattern.test(key))
      return unusable === -1 || `key ${unusable + 1} has characters a bearer token cannot carry`
    }),
  ),
  "comma-separated keys of letters, digits and - . _ ~ + /",
  () => "the keys are not shown",
)

/** The API keys given by the environment, beside the stored ones. */
export const apiKeySettings = {
  apiKeys: optionalSetting({
    variable: "PETSTORE_API_KEYS",
    whenUnset: "stored keys only; a first start with none makes one (see API keys)",
    description:
      "Comma-separated API keys accepted as `Authorization: Bearer <key>`, beside the keys stored with `npm run keys`. Letters, digits and `-._~+/` only.",
    read: fromEnv(apiKeys),
  }),
}
