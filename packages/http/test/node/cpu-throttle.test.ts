import assert from "node:assert/strict"
import { execFile } from "node:child_process"
import { mkdirSync, rmdirSync, writeFileSync } from "node:fs"
import path from "node:path"
import { after, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { cpuQuotaUnavailable } from "@petstore/test-support/cpu-quota"

/**
 * `longestCpuFreezeMs` reads the CPU quota that holds the process, as a container's CPU limit
 * does, from the cgroup it is in and that group's ancestors. Each case runs a process put in a
 * group of its own before it starts; without a cgroup v1 `cpu` controller and root the cases are
 * skipped, except in CI (`CI=true`), where they fail saying why.
 */

const unavailable = cpuQuotaUnavailable()
const skip = unavailable === undefined || process.env["CI"] === "true" ? false : unavailable

const root = "/sys/fs/cgroup/cpu"
const module = fileURLToPath(new URL("../../src/node/cpu-throttle.ts", import.meta.url))

/** The groups made here, removed (children first) once the cases are done. */
const made: Array<string> = []
after(() => {
  for (const directory of made.reverse()) rmdirSync(directory)
})

/** A group under `parent` allowing `cores` of a 100 ms period, or no quota. */
const group = (parent: string, name: string, cores?: number): string => {
  const directory = path.join(parent, `${name}-${process.pid}`)
  mkdirSync(directory)
  made.push(directory)
  writeFileSync(path.join(directory, "cpu.cfs_period_us"), "100000")
  writeFileSync(
    path.join(directory, "cpu.cfs_quota_us"),
    cores === undefined ? "-1" : String(Math.round(cores * 100_000)),
  )
  return directory
}

/** What `longestCpuFreezeMs` answers in a process started in `directory` (the root: in none). */
const freezeIn = async (directory: string): Promise<number> => {
  const script = `import(${JSON.stringify(module)}).then(async (m) => console.log(await m.longestCpuFreezeMs()))`
  // The shell joins the group, then becomes the process: nothing of it runs outside the group.
  const { stdout } = await promisify(execFile)("sh", [
    "-c",
    `echo $$ > ${path.join(directory, "cgroup.procs")} && exec "${process.execPath}" --import tsx -e '${script}'`,
  ])
  return Number(stdout.trim())
}

describe("longestCpuFreezeMs", { skip }, () => {
  it("is the period less the quota: a quarter of a core freezes for 75 ms of 100", async () => {
    assert.equal(unavailable, undefined, `no CPU quota can be made here: ${unavailable}`)
    assert.equal(await freezeIn(group(root, "petstore-freeze-quarter", 0.25)), 75)
  })

  it("is the longest freeze of the group and its ancestors", async () => {
    const parent = group(root, "petstore-freeze-parent", 0.5)
    assert.equal(await freezeIn(group(parent, "child", 0.3)), 70)
    assert.equal(await freezeIn(group(parent, "unlimited")), 50)
  })

  it("is 0 without a quota, or with one of a core or more", async () => {
    assert.equal(await freezeIn(root), 0)
    assert.equal(await freezeIn(group(root, "petstore-freeze-none")), 0)
    assert.equal(await freezeIn(group(root, "petstore-freeze-cores", 1.5)), 0)
  })
})
