import assert from "node:assert/strict"
import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { describe, it } from "node:test"
import { markedBlocks, sectionLines } from "../lib/readme-examples.js"
import { checkRoot, repoRoot } from "../lib/workspace.js"

const examplesFolder = path.relative(repoRoot, path.join(checkRoot, "examples"))

describe("the root README's Embedding section", () => {
  it("shows every example program, each block byte for byte the file its marker names", async () => {
    const readme = await readFile(path.join(repoRoot, "README.md"), "utf8")
    const section = sectionLines(readme, "Embedding")
    assert.ok(section !== undefined, "README.md has no `## Embedding` section")
    const blocks = markedBlocks(section.lines, section.firstLine)
    for (const block of blocks) {
      const file = await readFile(path.join(repoRoot, block.file), "utf8").catch(() => undefined)
      assert.ok(file !== undefined, `README.md:${block.line} shows ${block.file}, which is missing`)
      assert.equal(block.code, file, `README.md:${block.line} differs from ${block.file}`)
    }
    const examples = (await readdir(path.join(repoRoot, examplesFolder)))
      .filter((name) => name.endsWith(".ts"))
      .map((name) => `${examplesFolder}/${name}`)
    const shown = new Set(blocks.map((block) => block.file))
    assert.deepEqual(
      examples.filter((example) => !shown.has(example)),
      [],
      "examples README.md does not show (mark a block with <!-- example: path -->)",
    )
  })
})

describe("markedBlocks", () => {
  const markdown = [
    "## Embedding",
    "<!-- example: a.ts -->",
    "```ts",
    "const a = 1",
    "",
    "```",
    "```ts",
    "unmarked()",
    "```",
    "<!-- example: b.ts -->",
    "",
    "```ts",
    "b()",
    "```",
    "<!-- example: not-this.ts -->",
    "A paragraph between the marker and the block.",
    "```ts",
    "c()",
    "```",
    "<!-- example: c.ts -->",
    "```sh",
    "npm test",
    "```",
    "## Next",
    "<!-- example: d.ts -->",
    "```ts",
    "outside the section()",
    "```",
  ].join("\n")

  it("takes the TypeScript blocks whose nearest line above is a marker, in the section", () => {
    const section = sectionLines(markdown, "Embedding")
    assert.ok(section !== undefined)
    assert.deepEqual(markedBlocks(section.lines, section.firstLine), [
      { file: "a.ts", code: "const a = 1\n\n", line: 3 },
      { file: "b.ts", code: "b()\n", line: 12 },
    ])
  })

  it("refuses a block that is never closed", () => {
    assert.throws(() => markedBlocks(["<!-- example: a.ts -->", "```ts", "a()"], 1), /never closed/)
  })
})
