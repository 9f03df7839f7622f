/**
 * Writes the generated blocks of RESULTS.md again from results/http-bench.json, measuring
 * nothing: after a change to the generator (http-bench-report.ts) or to the hand-written text
 * around the blocks, so the file and the figures of the last full run stay consistent.
 *
 *   npm run render -w @petstore/bench
 */
import { readFileSync } from "node:fs"
import path from "node:path"
import { Either } from "effect"
import { decodeReport, renderBlocks } from "./http-bench-report.js"
import { resultsJson, resultsMarkdown, writeBlocks } from "./results-markdown.js"

const report = decodeReport(readFileSync(resultsJson, "utf8"))
if (Either.isLeft(report)) {
  process.stderr.write(
    `${path.relative(process.cwd(), resultsJson)} is not a report this generator reads (write it again with npm run bench): ${report.left}\n`,
  )
  process.exit(1)
}
try {
  await writeBlocks(renderBlocks(report.right))
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
process.stderr.write(
  `wrote the generated blocks of ${path.relative(process.cwd(), resultsMarkdown)} from ${path.relative(process.cwd(), resultsJson)}\n`,
)
