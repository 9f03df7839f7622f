import { readFile, writeFile } from "node:fs/promises"
import { readmePath, rewriteSections } from "./generated-sections.js"
import { readmeSections } from "./readme-sections.js"

/** Rewrites every generated section of the README (see readme-sections.ts). */
const current = await readFile(readmePath, "utf8")
await writeFile(readmePath, await rewriteSections(current, readmeSections, readmePath))
process.stdout.write(`wrote ${Object.keys(readmeSections).join(", ")} in ${readmePath}\n`)
