import { fileURLToPath } from "node:url"
import { format, resolveConfig } from "prettier"
import escapeRegExp from "escape-string-regexp"

/** The repository's README, whose generated sections the `readme` script writes. */
export const readmePath = fileURLToPath(new URL("../../../README.md", import.meta.url))

const sectionPattern = (name: string) =>
  new RegExp(
    `(<!-- generated:${escapeRegExp(name)} -->)[\\s\\S]*?(<!-- /generated:${escapeRegExp(name)} -->)`,
  )

/** The text between a section's markers, or `undefined` when the markers are missing. */
export const sectionText = (markdown: string, name: string): string | undefined =>
  sectionPattern(name).exec(markdown)?.[0]

/**
 * The Markdown with each section's text replaced by what its function returns, formatted as the
 * repository formats Markdown. Markers of sections not given are left as they are.
 */
export const rewriteSections = async (
  markdown: string,
  sections: Readonly<Record<string, () => string>>,
  filepath: string,
): Promise<string> => {
  let rewritten = markdown
  for (const [name, render] of Object.entries(sections)) {
    const pattern = sectionPattern(name)
    if (!pattern.test(rewritten)) {
      throw new Error(
        `${filepath} has no <!-- generated:${name} --> … <!-- /generated:${name} --> markers`,
      )
    }
    rewritten = rewritten.replace(pattern, (_, start: string, end: string) =>
      [start, render(), end].join("\n\n"),
    )
  }
  const options = await resolveConfig(filepath)
  return format(rewritten, { ...options, filepath })
}
