/** What http-bench.ts reports about the machine, the packages and the build it measured. */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { totalmem } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { Option, Schema } from "effect"

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
const benchDir = fileURLToPath(new URL(".", import.meta.url))

export interface Machine {
  readonly nproc: number
  readonly cpuModel: string
  readonly memoryGiB: number
  readonly node: string
  readonly kernel: string
}

export const environment = (): Machine => ({
  nproc: Number(execFileSync("nproc").toString().trim()),
  cpuModel:
    /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1]?.trim() ??
    "unknown",
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  kernel: execFileSync("uname", ["-r"]).toString().trim(),
})

const PackageJson = Schema.parseJson(Schema.Struct({ version: Schema.String }))
const readVersion = Schema.decodeUnknownOption(PackageJson)

/** The installed version of a package, looked up as Node would from tools/bench. */
const installedVersion = (name: string): string => {
  for (const root of [benchDir, repoRoot]) {
    const file = path.join(root, "node_modules", name, "package.json")
    if (!existsSync(file)) continue
    const parsed = readVersion(readFileSync(file, "utf8"))
    if (Option.isSome(parsed)) return parsed.value.version
  }
  return "not installed"
}

export const versions = (): Record<string, string> =>
  Object.fromEntries(
    ["koa", "@koa/router", "fastify", "ajv", "effect", "autocannon", "tsx"].map((name) => [
      name,
      installedVersion(name),
    ]),
  )

/** The newest modification time of the `.ts` files under a directory, in ms. */
const newestSource = (directory: string): number => {
  let newest = 0
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue
    newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs)
  }
  return newest
}

export interface ServiceBuild {
  /** Node's arguments, run from the repository root. */
  readonly args: ReadonlyArray<string>
  readonly description: string
  /** Builds older than their sources (the numbers would not be those of the sources). */
  readonly warnings: ReadonlyArray<string>
}

const packages = [
  { dir: "packages/core", built: "dist/index.js" },
  { dir: "packages/storage", built: "dist/index.js" },
  { dir: "packages/storage-sqlite", built: "dist/index.js" },
  { dir: "packages/storage-postgres", built: "dist/index.js" },
  { dir: "packages/http", built: "dist/index.js" },
  { dir: "apps/server", built: "dist/main.js" },
]

/**
 * How to run the service: `BENCH_SERVICE=dist` (the default when apps/server is built) runs
 * apps/server/dist/main.js; `src` runs apps/server/src/main.ts through tsx. Either way
 * the packages it uses (@petstore/core, the storage packages, @petstore/http) are imported from
 * their dist/ (their `exports`), so a build older than its sources is reported.
 */
export const serviceBuild = (): ServiceBuild => {
  const distMain = path.join(repoRoot, "apps/server/dist/main.js")
  const requested = process.env["BENCH_SERVICE"] ?? (existsSync(distMain) ? "dist" : "src")
  if (requested !== "dist" && requested !== "src")
    throw new Error(`BENCH_SERVICE must be dist or src; got ${requested}`)
  const warnings: Array<string> = []
  for (const { dir, built } of packages) {
    if (requested === "src" && dir === "apps/server") continue
    const output = path.join(repoRoot, dir, built)
    if (!existsSync(output)) {
      warnings.push(`${dir} is not built (${built} is missing): run npm run build`)
      continue
    }
    if (newestSource(path.join(repoRoot, dir, "src")) > statSync(output).mtimeMs)
      warnings.push(`${dir}/src changed after ${dir}/${built} was built: run npm run build`)
  }
  return requested === "dist"
    ? { args: [distMain], description: "apps/server/dist/main.js (built)", warnings }
    : {
        args: ["--import", "tsx", path.join(repoRoot, "apps/server/src/main.ts")],
        description: "apps/server/src/main.ts through tsx (the packages from their dist/)",
        warnings,
      }
}

/** Another checkout's built service, benchmarked beside this one (`BENCH_BEFORE`). */
export interface OtherBuild {
  readonly path: string
  readonly main: string
  /** The checkout's commit, short. */
  readonly commit: string
}

const commitOf = (root: string): string => {
  try {
    return execFileSync("git", ["-C", root, "rev-parse", "--short", "HEAD"]).toString().trim()
  } catch {
    return path.basename(root)
  }
}

/**
 * `BENCH_BEFORE`: the roots of other checkouts of this repository (separated by `:`), each built
 * (`npm run build`), whose service runs beside this one: the same machine and run, the rounds
 * interleaved. Its server is apps/server/dist/main.js, or apps/http/dist/main.js in checkouts from
 * before the packages split.
 */
export const beforeBuilds = (): ReadonlyArray<OtherBuild> =>
  (process.env["BENCH_BEFORE"] ?? "")
    .split(path.delimiter)
    .filter((root) => root !== "")
    .map((root) => {
      const main = ["apps/server/dist/main.js", "apps/http/dist/main.js"]
        .map((candidate) => path.resolve(root, candidate))
        .find((candidate) => existsSync(candidate))
      if (main === undefined)
        throw new Error(
          `BENCH_BEFORE: neither apps/server/dist/main.js nor apps/http/dist/main.js is built in ${root}`,
        )
      return { path: root, main, commit: commitOf(root) }
    })
