import path from "node:path"
import { isRecord } from "./json.js"

/** Besides `dist/`, what a tarball holds: these three, each required. */
export const packageFiles = ["package.json", "README.md", "LICENSE"] as const

const compiled = /^dist\/.+\.(js|d\.ts)(\.map)?$/
const testFolder = /(^|\/)(test|tests|__tests__)\//
const testFile = /\.(test|spec)\.(js|d\.ts)(\.map)?$/

/** Whether a file of a tarball may be published: compiled JS, declarations, maps, and the three. */
const isPublishable = (file: string): boolean =>
  packageFiles.some((name) => name === file) ||
  (compiled.test(file) && !testFolder.test(file) && !testFile.test(file))

/** The files of a tarball that should not be in it (sources, tests, configs, build info). */
export const unexpectedFiles = (files: ReadonlyArray<string>): ReadonlyArray<string> =>
  files.filter((file) => !isPublishable(file))

/** `package.json`, `README.md` or `LICENSE` when the tarball lacks it. */
export const missingFiles = (files: ReadonlyArray<string>): ReadonlyArray<string> =>
  packageFiles.filter((name) => !files.includes(name))

const mappingUrl = /\/\/# sourceMappingURL=(\S+)\s*$/

/** `a/b/../c.js` as `a/c.js`, relative to the package; outside it, starting with `../`. */
const resolveIn = (fromFile: string, reference: string): string =>
  path.posix.normalize(path.posix.join(path.posix.dirname(fromFile), reference))

/**
 * The references of a tarball's source maps that lead nowhere in it, as `file → reference`:
 * a `sourceMappingURL` comment naming a map the tarball lacks, or a map's source that is
 * neither in the tarball nor carried in the map's `sourcesContent` (a map that carries its
 * sources' text, as `inlineSources` writes it, never sends a debugger or bundler to the path).
 */
export const brokenSourceMapReferences = (
  files: ReadonlyArray<string>,
  read: (file: string) => string,
): ReadonlyArray<string> => {
  const shipped = new Set(files)
  const broken: Array<string> = []
  for (const file of files) {
    if (file.endsWith(".js") || file.endsWith(".d.ts")) {
      const url = mappingUrl.exec(read(file))?.[1]
      if (url === undefined || url.startsWith("data:")) continue
      const target = resolveIn(file, decodeURIComponent(url))
      if (!shipped.has(target)) broken.push(`${file} → ${target}`)
    } else if (file.endsWith(".map")) {
      const map: unknown = JSON.parse(read(file))
      if (!isRecord(map) || !Array.isArray(map["sources"])) {
        broken.push(`${file} → (not a source map)`)
        continue
      }
      const root = typeof map["sourceRoot"] === "string" ? map["sourceRoot"] : ""
      const contents: ReadonlyArray<unknown> = Array.isArray(map["sourcesContent"])
        ? map["sourcesContent"]
        : []
      map["sources"].forEach((source: unknown, index) => {
        if (typeof contents[index] === "string") return
        const target =
          typeof source === "string" ? resolveIn(file, path.posix.join(root, source)) : "(none)"
        if (!shipped.has(target)) broken.push(`${file} → ${target}`)
      })
    }
  }
  return broken
}
