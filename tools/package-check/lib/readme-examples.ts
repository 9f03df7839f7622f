/** A fenced TypeScript block of a README, and the file its marker says it shows. */
export interface MarkedBlock {
  /** The path after `<!-- example: `, relative to the repository root. */
  readonly file: string
  /** The block's lines, each ending in a newline: what the file must hold, byte for byte. */
  readonly code: string
  /** 1-based line of the opening fence. */
  readonly line: number
}

const marker = /^<!--\s*example:\s*(\S+)\s*-->$/
const openingFence = /^```(ts|typescript)\s*$/
const closingFence = /^```\s*$/

/** The lines of the `## title` section: after its heading, up to the next `## ` heading. */
export const sectionLines = (
  markdown: string,
  title: string,
): { readonly lines: ReadonlyArray<string>; readonly firstLine: number } | undefined => {
  const lines = markdown.split("\n")
  const start = lines.findIndex((line) => line.trimEnd() === `## ${title}`)
  if (start === -1) return undefined
  const length = lines.slice(start + 1).findIndex((line) => line.startsWith("## "))
  return {
    lines: lines.slice(start + 1, length === -1 ? undefined : start + 1 + length),
    firstLine: start + 2,
  }
}

/**
 * The TypeScript blocks of a section whose nearest non-blank line above the opening fence is an
 * `<!-- example: path -->` marker (Prettier puts a blank line between the two). Unmarked blocks
 * are left out.
 */
export const markedBlocks = (
  lines: ReadonlyArray<string>,
  firstLine: number,
): ReadonlyArray<MarkedBlock> => {
  const blocks: Array<MarkedBlock> = []
  lines.forEach((line, index) => {
    if (!openingFence.test(line)) return
    const above = lines.slice(0, index).findLast((candidate) => candidate.trim() !== "")
    const file = marker.exec(above ?? "")?.[1]
    if (file === undefined) return
    const length = lines.slice(index + 1).findIndex((candidate) => closingFence.test(candidate))
    if (length === -1) throw new Error(`the block at line ${firstLine + index} is never closed`)
    const body = lines.slice(index + 1, index + 1 + length)
    blocks.push({
      file,
      code: body.map((bodyLine) => `${bodyLine}\n`).join(""),
      line: firstLine + index,
    })
  })
  return blocks
}
