import { Redacted } from "effect"
import type { IssuedApiKey } from "@petstore/http"

/** The label of the key a server creates on its first start. */
export const firstStartKeyLabel = "created at first start"

/** What a server prints, once, about the key it created on its first start. */
export const firstStartKeyBanner = (issued: IssuedApiKey): string => {
  const key = Redacted.value(issued.key)
  return [
    "",
    `  No API key is configured or stored, so one was created and stored (id ${issued.record.id}):`,
    "",
    `    ${key}`,
    "",
    `  Send it as:  Authorization: Bearer ${key}`,
    "  Only its hash is kept, so it is shown this once. Manage keys with: npm run keys -- --help",
    "",
    "",
  ].join("\n")
}
