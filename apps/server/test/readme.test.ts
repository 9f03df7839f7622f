import assert from "node:assert/strict"
import { readFile } from "node:fs/promises"
import { describe, it } from "node:test"
import { readmePath, rewriteSections, sectionText } from "../scripts/generated-sections.js"
import { readmeSections } from "../scripts/readme-sections.js"
import { settings } from "../src/settings/settings.js"

const stale = "README.md is stale: run npm run readme -w @petstore/server"

describe("the README's generated sections", () => {
  it("are what npm run readme writes", async () => {
    const committed = await readFile(readmePath, "utf8")
    const written = await rewriteSections(committed, readmeSections, readmePath)
    for (const name of Object.keys(readmeSections)) {
      assert.equal(sectionText(committed, name), sectionText(written, name), `${stale} (${name})`)
    }
  })

  it("document every setting of the configuration", () => {
    const table = readmeSections["configuration"]?.() ?? ""
    for (const setting of Object.values(settings)) {
      assert.ok(table.includes(`| \`${setting.variable}\` |`), setting.variable)
    }
  })

  it("rewrite only what lies between a section's markers, and require the markers", async () => {
    const markdown =
      "# Title\n\nBefore.\n\n<!-- generated:x -->\nold\n<!-- /generated:x -->\n\nAfter.\n"
    const written = await rewriteSections(markdown, { x: () => "*new*" }, readmePath)
    assert.equal(
      written,
      "# Title\n\nBefore.\n\n<!-- generated:x -->\n\n_new_\n\n<!-- /generated:x -->\n\nAfter.\n",
    )
    await assert.rejects(
      rewriteSections(markdown, { y: () => "" }, readmePath),
      /no <!-- generated:y -->/,
    )
  })
})
