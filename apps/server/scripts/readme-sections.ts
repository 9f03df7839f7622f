import { errorCatalogue, errorCodes } from "@petstore/http"
import type { SettingDefault } from "../src/settings/setting.js"
import { settings } from "../src/settings/settings.js"

/** A Markdown table; prettier aligns it when the README is written. */
const markdownTable = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
): string =>
  [header, header.map(() => "---"), ...rows]
    .map((cells) => `| ${cells.map((cell) => cell.replaceAll("|", "\\|")).join(" | ")} |`)
    .join("\n")

const shownDefault = (fallback: SettingDefault): string =>
  "value" in fallback ? `\`${fallback.value}\`` : `(none: ${fallback.none})`

const configuration = (): string =>
  markdownTable(
    ["Variable", "Default", "Meaning"],
    Object.values(settings).map((setting) => [
      `\`${setting.variable}\``,
      shownDefault(setting.default),
      setting.description,
    ]),
  )

const answeredBy = {
  operation: "the operation",
  router: "the router",
  node: "the edge, before any route",
} as const

const errors = (): string =>
  markdownTable(
    ["Status", "Code", "When", "Headers", "Answered by"],
    errorCodes.map((code) => {
      const entry = errorCatalogue[code]
      return [
        String(entry.status),
        `\`${code}\``,
        entry.when,
        Object.keys("headers" in entry ? entry.headers : {})
          .map((name) => `\`${name}\``)
          .join(", "),
        answeredBy[entry.origin],
      ]
    }),
  )

/**
 * The README's generated sections: each name's Markdown goes between `<!-- generated:NAME -->`
 * and `<!-- /generated:NAME -->` in /README.md (`npm run readme -w @petstore/server`).
 */
export const readmeSections: Readonly<Record<string, () => string>> = {
  configuration,
  errors,
}
