import { mkdir, readdir } from "node:fs/promises"
import path from "node:path"
import { isRecord } from "./json.js"
import { runOk } from "./processes.js"
import { publishedPackages, repoRoot, type PublishedName } from "./workspace.js"

export interface Packed {
  readonly name: PublishedName
  /** The `.tgz` npm made. */
  readonly tarball: string
  /** Where the tarball is unpacked: its `package/` folder. */
  readonly unpacked: string
  /** Every file of the tarball, relative to `package/`, in `/` form, sorted. */
  readonly files: ReadonlyArray<string>
}

/** Each package's tarball name, from the output of `npm pack --json`. */
const packedFilenames = (json: string): ReadonlyMap<string, string> => {
  const parsed: unknown = JSON.parse(json)
  if (!Array.isArray(parsed)) throw new Error(`npm pack --json printed no array: ${json}`)
  const filenames = new Map<string, string>()
  for (const entry of parsed) {
    if (!isRecord(entry)) continue
    const { name, filename } = entry
    if (typeof name === "string" && typeof filename === "string") filenames.set(name, filename)
  }
  return filenames
}

const filesUnder = async (directory: string): Promise<ReadonlyArray<string>> => {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true })
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name)))
    .map((file) => file.split(path.sep).join("/"))
    .sort()
}

/**
 * Packs every published package with one `npm pack` (the files npm would publish, from the
 * current `dist/`) into `destination`, and unpacks each tarball beside it.
 */
export const packAll = async (destination: string): Promise<ReadonlyArray<Packed>> => {
  const packed = await runOk(
    "npm",
    [
      "pack",
      "--json",
      "--pack-destination",
      destination,
      ...publishedPackages.flatMap(({ folder }) => ["--workspace", folder]),
    ],
    { cwd: repoRoot, timeoutMs: 60_000 },
  )
  const filenames = packedFilenames(packed.stdout)
  return Promise.all(
    publishedPackages.map(async ({ name }) => {
      const filename = filenames.get(name)
      if (filename === undefined) throw new Error(`npm pack made no tarball of ${name}`)
      const tarball = path.join(destination, filename)
      const into = path.join(destination, filename.replace(/\.tgz$/, ""))
      await mkdir(into)
      await runOk("tar", ["-xzf", tarball, "-C", into], { cwd: destination, timeoutMs: 30_000 })
      const unpacked = path.join(into, "package")
      return { name, tarball, unpacked, files: await filesUnder(unpacked) }
    }),
  )
}
