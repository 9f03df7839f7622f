import { readdir, readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { isRecord } from "./json.js"

export const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
export const checkRoot = fileURLToPath(new URL("..", import.meta.url))

/** Where each example program and fixture of this check lives. */
export const examplePath = (name: string): string => path.join(checkRoot, "examples", name)
export const fixturePath = (name: string): string => path.join(checkRoot, "fixtures", name)

/** The packages published to npm, by their folder in the monorepo. */
export const publishedPackages = [
  { name: "@petstore/core", folder: "packages/core" },
  { name: "@petstore/storage", folder: "packages/storage" },
  { name: "@petstore/storage-sqlite", folder: "packages/storage-sqlite" },
  { name: "@petstore/storage-postgres", folder: "packages/storage-postgres" },
  { name: "@petstore/http", folder: "packages/http" },
  { name: "@petstore/client", folder: "packages/client" },
] as const

export type PublishedName = (typeof publishedPackages)[number]["name"]

const require = createRequire(import.meta.url)

/** The absolute path of a command a dependency of this workspace installs (`tsc`, `attw`). */
export const binPath = async (packageName: string, command: string): Promise<string> => {
  const manifestPath = require.resolve(`${packageName}/package.json`)
  const manifest: unknown = JSON.parse(await readFile(manifestPath, "utf8"))
  const bin = isRecord(manifest) ? manifest["bin"] : undefined
  const relative = isRecord(bin) ? bin[command] : undefined
  if (typeof relative !== "string") throw new Error(`${packageName} has no bin ${command}`)
  return path.join(path.dirname(manifestPath), relative)
}

const readManifest = async (file: string): Promise<Readonly<Record<string, unknown>>> => {
  const manifest: unknown = JSON.parse(await readFile(file, "utf8"))
  if (!isRecord(manifest)) throw new Error(`${file} holds no object`)
  return manifest
}

/** The names of the workspaces that are not private: those npm would publish. */
export const publicWorkspaces = async (): Promise<ReadonlyArray<string>> => {
  const names: Array<string> = []
  for (const parent of ["packages", "apps", "tools"]) {
    for (const entry of await readdir(path.join(repoRoot, parent), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const file = path.join(repoRoot, parent, entry.name, "package.json")
      const manifest = await readManifest(file).catch(() => undefined)
      if (manifest === undefined || manifest["private"] === true) continue
      if (typeof manifest["name"] === "string") names.push(manifest["name"])
    }
  }
  return names.sort()
}

/** This check's own `devDependencies`. */
export const ownDevDependencies = async (): Promise<Readonly<Record<string, unknown>>> => {
  const devDependencies = (await readManifest(path.join(checkRoot, "package.json")))[
    "devDependencies"
  ]
  return isRecord(devDependencies) ? devDependencies : {}
}
