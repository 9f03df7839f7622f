/**
 * RESULTS.md is written by hand around blocks that http-bench.ts generates: each block sits
 * between `<!-- http-bench:<name> -->` and `<!-- /http-bench:<name> -->`, and only what is between
 * them is ever replaced. The hand-written text around a block reads its figures (what a target's
 * status means, what would close it), so a block is never moved or dropped by the generator: a
 * missing marker, or a missing section the targets link to, is refused before anything is
 * measured or written. Other scripts write blocks of their own the same way (`writeOwnBlock`).
 */
import { readFileSync, writeFileSync } from "node:fs"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { format, resolveConfig } from "prettier"
import { blockNames, sections, type Blocks } from "./http-bench-report.js"

const benchDir = fileURLToPath(new URL(".", import.meta.url))
export const resultsMarkdown = path.join(benchDir, "RESULTS.md")
export const resultsJson = path.join(benchDir, "results", "http-bench.json")

const opening = (name: string) => `<!-- http-bench:${name} -->`
const closing = (name: string) => `<!-- /http-bench:${name} -->`

/** The blocks whose markers are missing, out of order or doubled in `text`. */
export const markerProblems = (text: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  let after = 0
  for (const name of blockNames) {
    const from = text.indexOf(opening(name))
    const to = text.indexOf(closing(name))
    if (from === -1 || to === -1)
      problems.push(`${name}: ${opening(name)} … ${closing(name)} missing`)
    else if (to < from) problems.push(`${name}: its closing marker comes first`)
    else if (from < after)
      problems.push(`${name}: out of order (the blocks go ${blockNames.join(", ")})`)
    else if (text.indexOf(opening(name), from + 1) !== -1)
      problems.push(`${name}: its markers appear twice`)
    else after = to
  }
  return problems
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
const anchor = (heading: string) =>
  `#${heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-")}`

/** The sections the targets link to that `text` has no heading for. */
export const anchorProblems = (text: string): ReadonlyArray<string> => {
  const anchors = new Set(
    text
      .split("\n")
      .filter((line) => line.startsWith("#"))
      .map((line) => anchor(line.replace(/^#+/, ""))),
  )
  return Object.values(sections)
    .filter((section) => !anchors.has(section))
    .map((section) => `no heading for ${section}, which the targets link to`)
}

/** Refuses, in one paragraph, a RESULTS.md whose blocks the generator could not write. */
export const checkResultsMarkdown = (): void => {
  const text = readFileSync(resultsMarkdown, "utf8")
  const problems = [...markerProblems(text), ...anchorProblems(text)]
  if (problems.length > 0)
    throw new Error(
      `${path.relative(process.cwd(), resultsMarkdown)} cannot take the generated figures: ${problems.join("; ")}. Restore them (see git history of the file) before running.`,
    )
}

/** `text` with each block that has content replaced; the others keep what they held. */
export const withBlocks = (text: string, blocks: Blocks): string =>
  blockNames.reduce((current, name) => {
    const content = blocks[name]
    if (content === undefined) return current
    const from = current.indexOf(opening(name)) + opening(name).length
    const to = current.indexOf(closing(name))
    return `${current.slice(0, from)}\n\n${content.trim()}\n\n${current.slice(to)}`
  }, text)

/** Text as the repository's Prettier settings write it, so `format:check` stays green. */
export const formatted = async (file: string, text: string) =>
  format(text, { ...(await resolveConfig(file)), filepath: file })

/** Writes the blocks into RESULTS.md (checked first), formatted. */
export const writeBlocks = async (blocks: Blocks): Promise<void> => {
  checkResultsMarkdown()
  const updated = withBlocks(readFileSync(resultsMarkdown, "utf8"), blocks)
  writeFileSync(resultsMarkdown, await formatted(resultsMarkdown, updated))
}

/**
 * What is wrong with `text`'s markers of a block another script writes (`<!-- <name> -->` …
 * `<!-- /<name> -->`, each once and in that order), or `undefined`.
 */
const ownMarkerProblem = (text: string, name: string): string | undefined => {
  const from = text.indexOf(`<!-- ${name} -->`)
  const to = text.indexOf(`<!-- /${name} -->`)
  if (from === -1 || to === -1) return `<!-- ${name} --> … <!-- /${name} --> missing`
  if (to < from) return `<!-- /${name} --> comes before <!-- ${name} -->`
  if (text.indexOf(`<!-- ${name} -->`, from + 1) !== -1) return `<!-- ${name} --> appears twice`
  return undefined
}

/** Refuses, in one paragraph, a RESULTS.md without the markers of the block `name`. */
export const checkOwnBlock = (name: string): void => {
  const problem = ownMarkerProblem(readFileSync(resultsMarkdown, "utf8"), name)
  if (problem !== undefined)
    throw new Error(
      `${path.relative(process.cwd(), resultsMarkdown)} cannot take the generated figures: ${problem}. Restore them (see git history of the file) before running.`,
    )
}

/**
 * Writes `content` between the markers of the block `name` (checked first), formatted: the
 * block of a script other than http-bench.ts (`backup-restore:results`, …), whose hand-written
 * reading around it is left as it is.
 */
export const writeOwnBlock = async (name: string, content: string): Promise<void> => {
  checkOwnBlock(name)
  const text = readFileSync(resultsMarkdown, "utf8")
  const from = text.indexOf(`<!-- ${name} -->`) + `<!-- ${name} -->`.length
  const to = text.indexOf(`<!-- /${name} -->`)
  const updated = `${text.slice(0, from)}\n\n${content.trim()}\n\n${text.slice(to)}`
  writeFileSync(resultsMarkdown, await formatted(resultsMarkdown, updated))
}
