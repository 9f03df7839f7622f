import assert from "node:assert/strict"
import { readdir, readFile } from "node:fs/promises"
import path from "node:path"
import { before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { cruise, type ICruiseResult, type IModule } from "dependency-cruiser"
import { floors } from "./floors.js"

const repoRoot = fileURLToPath(new URL("../..", import.meta.url))
const workspaceDirs = ["apps", "packages", "tools"]

/** `packages/http` for `packages/http/src/app.ts`. */
const workspaceOf = (file: string): string => file.split("/").slice(0, 2).join("/")

const floorOf = (file: string): number | undefined => {
  const root = Object.keys(floors).find((src) => file.startsWith(`${src}/`))
  if (root === undefined) return undefined
  const inside = file.slice(root.length + 1)
  const loose = !inside.includes("/")
  const index = (floors[root] ?? []).findIndex((floor) =>
    floor.some((entry) =>
      entry.endsWith("/")
        ? inside.startsWith(entry)
        : entry === "*.ts"
          ? loose && inside !== "index.ts"
          : inside === entry,
    ),
  )
  return index === -1 ? undefined : index
}

const sourceDirs = async (): Promise<ReadonlyArray<string>> => {
  const dirs: Array<string> = []
  for (const parent of workspaceDirs) {
    for (const entry of await readdir(path.join(repoRoot, parent), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue
      const src = path.join(parent, entry.name, "src")
      if (
        await readdir(path.join(repoRoot, src)).then(
          () => true,
          () => false,
        )
      )
        dirs.push(src)
    }
  }
  return dirs
}

/** Every workspace's own text files: sources, tests, scripts, manifests. */
const workspaceFiles = async (): Promise<ReadonlyArray<string>> => {
  const files: Array<string> = []
  for (const parent of workspaceDirs) {
    const entries = await readdir(path.join(repoRoot, parent), { recursive: true })
    for (const entry of entries) {
      if (/(^|\/)(node_modules|dist|\.turbo|results)(\/|$)/.test(entry)) continue
      if (/\.(ts|mts|js|mjs|json)$/.test(entry)) files.push(path.join(parent, entry))
    }
  }
  return files
}

let modules: ReadonlyArray<IModule> = []
let circles: ICruiseResult["summary"]["violations"] = []

before(async () => {
  process.chdir(repoRoot)
  const result = await cruise(
    [...(await sourceDirs())],
    {
      validate: true,
      ruleSet: {
        forbidden: [{ name: "no-circular", severity: "error", from: {}, to: { circular: true } }],
      },
      tsPreCompilationDeps: true,
      doNotFollow: { path: "node_modules" },
      exclude: { path: "(^|/)(dist|node_modules)/" },
    },
    { extensions: [".ts", ".js"] },
  )
  const output = result.output
  assert.ok(typeof output !== "string", "dependency-cruiser answered text, not a result")
  modules = output.modules.filter((module) => module.source.includes("/src/"))
  circles = output.summary.violations
})

describe("the house", () => {
  it("reads every package's sources", () => {
    for (const src of Object.keys(floors)) {
      assert.ok(
        modules.some((module) => module.source.startsWith(`${src}/`)),
        `no module read in ${src}`,
      )
    }
  })

  it("has no import circle", () => {
    assert.deepEqual(
      circles.map((violation) =>
        [violation.from, ...(violation.cycle ?? []).map((step) => step.name)].join(" → "),
      ),
      [],
    )
  })

  it("gives every source file a floor", () => {
    const unplaced = modules
      .map((module) => module.source)
      .filter((file) => floorOf(file) === undefined)
    assert.deepEqual(unplaced, [], "add their folder to tools/architecture/floors.ts")
  })

  it("imports only down (or across) the floors inside each package", () => {
    const upward = modules.flatMap((module) =>
      module.dependencies
        .filter((dependency) => dependency.resolved.includes("/src/"))
        .filter((dependency) => {
          const from = floorOf(module.source)
          const to = floorOf(dependency.resolved)
          return from !== undefined && to !== undefined && to > from
        })
        .map((dependency) => `${module.source} → ${dependency.resolved}`),
    )
    assert.deepEqual(upward, [])
  })

  it("never imports another workspace's files by path", () => {
    const crossing = modules.flatMap((module) =>
      module.dependencies
        .filter((dependency) => /^(apps|packages|tools)\//.test(dependency.resolved))
        .filter((dependency) => workspaceOf(dependency.resolved) !== workspaceOf(module.source))
        .map((dependency) => `${module.source} → ${dependency.resolved}`),
    )
    assert.deepEqual(crossing, [])
  })

  it("never names another workspace's files by a relative path, in code, tests or scripts", async () => {
    const climbing = /(?:\.\.\/){2,}(?:apps|packages|tools)\//
    const offenders: Array<string> = []
    for (const file of await workspaceFiles()) {
      const text = await readFile(path.join(repoRoot, file), "utf8")
      if (climbing.test(text)) offenders.push(file)
    }
    assert.deepEqual(offenders, [])
  })
})
