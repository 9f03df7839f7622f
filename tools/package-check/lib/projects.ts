import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import path from "node:path"
import { runOk, type Finished, type RunOptions } from "./processes.js"
import { binPath } from "./workspace.js"

/** What a user of the packages is likely to compile with, and stricter where it costs nothing. */
export const consumerTsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    noEmitOnError: true,
    outDir: "dist",
    types: ["node"],
  },
  include: ["**/*.ts"],
}

/** A project of its own, outside the monorepo: `{"type":"module"}`, the tsconfig above. */
export const makeProject = async (
  parent: string,
  name: string,
  manifest: Readonly<Record<string, unknown>> = {},
): Promise<string> => {
  const directory = path.join(parent, name)
  await mkdir(directory)
  await writeFile(
    path.join(directory, "package.json"),
    `${JSON.stringify({ type: "module", ...manifest }, null, 2)}\n`,
  )
  await writeFile(
    path.join(directory, "tsconfig.json"),
    `${JSON.stringify(consumerTsconfig, null, 2)}\n`,
  )
  return directory
}

/** Copies a file into the project, under `as` (a path in it) or its own name. */
export const addFile = async (project: string, from: string, as = path.basename(from)) => {
  const to = path.join(project, as)
  await mkdir(path.dirname(to), { recursive: true })
  await copyFile(from, to)
}

type Priority = Pick<RunOptions, "lowPriority">

/** A plain `npm install` of tarballs and registry packages, as a user would type it. */
export const install = (
  project: string,
  specs: ReadonlyArray<string>,
  options: Priority & { readonly timeoutMs: number },
): Promise<Finished> =>
  runOk("npm", ["install", ...specs, "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: project,
    // A native dependency (better-sqlite3, compiled here: no prebuilt binary can be downloaded)
    // builds with a job per core, not one: the longest step of this suite.
    env: { JOBS: "max" },
    ...options,
  })

/** Typechecks the project's TypeScript and writes it to `dist/`, with the monorepo's `tsc`. */
export const compile = async (project: string, options: Priority = {}): Promise<Finished> =>
  runOk(process.execPath, [await binPath("typescript", "tsc"), "-p", "."], {
    cwd: project,
    timeoutMs: 120_000,
    ...options,
  })

/**
 * Every folder in `node_modules` that holds the package `name` (`a/node_modules/effect` for
 * one nested in `a`), relative to the project.
 */
export const installedCopies = async (
  project: string,
  name: string,
): Promise<ReadonlyArray<string>> => {
  const modules = path.join(project, "node_modules")
  const copies: Array<string> = []
  for (const entry of await readdir(modules, { recursive: true })) {
    const folders = entry.split(path.sep)
    if (folders.at(-1) !== "package.json") continue
    const folder = folders.slice(0, -1).join("/")
    if (!(folder === name || folder.endsWith(`/node_modules/${name}`))) continue
    const manifest: unknown = JSON.parse(await readFile(path.join(modules, entry), "utf8"))
    if (typeof manifest === "object" && manifest !== null && "name" in manifest) {
      if (manifest.name === name) copies.push(`node_modules/${folder}`)
    }
  }
  return copies
}
