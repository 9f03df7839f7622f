import { readFile } from "node:fs/promises"
import path from "node:path"

/**
 * The longest the process can be frozen by a CPU quota, in milliseconds: a container's CPU limit
 * (a cgroup's `cpu.cfs_quota_us` over `cpu.cfs_period_us` in cgroup v1, `cpu.max` in v2) lets
 * its processes run for the quota in each period, then freezes them until the period ends. At a
 * quarter of a core and the usual 100 ms period, a request arriving as the freeze begins waits
 * 75 ms however light the load. 0 without a quota below one core, or where none can be read
 * (not Linux, no cgroup mounted).
 *
 * The group's own limit and its ancestors' all freeze the process: the longest freeze of any.
 */
export const longestCpuFreezeMs = async (): Promise<number> => {
  const groups = await cpuGroups().catch(() => [])
  const freezes = await Promise.all(groups.map((group) => freezeOf(group).catch(() => 0)))
  return Math.max(0, ...freezes)
}

/** A cgroup directory whose CPU limit holds this process, and its hierarchy's version. */
interface Group {
  readonly version: 1 | 2
  readonly directory: string
}

/** A cgroup mount of /proc/self/mountinfo: where it is, and which of the hierarchy is its root. */
interface Mount {
  readonly root: string
  readonly point: string
  readonly type: string
  readonly options: ReadonlyArray<string>
}

const mounts = async (): Promise<ReadonlyArray<Mount>> =>
  (await readFile("/proc/self/mountinfo", "utf8")).split("\n").flatMap((line): Array<Mount> => {
    // "id parent major:minor root point options [optional fields] - type source super-options"
    const [before = "", after = ""] = line.split(" - ")
    const [, , , root = "", point = ""] = before.split(" ")
    const [type = "", , superOptions = ""] = after.split(" ")
    return type === "cgroup" || type === "cgroup2"
      ? [{ root, point, type, options: superOptions.split(",") }]
      : []
  })

/**
 * The process's group and each of its ancestors up to the mount's root: in v1's `cpu` controller
 * where one is mounted, else in v2's unified hierarchy.
 */
const cpuGroups = async (): Promise<ReadonlyArray<Group>> => {
  // "hierarchy-id:controllers:group", controllers empty in v2.
  const memberships = (await readFile("/proc/self/cgroup", "utf8")).split("\n").flatMap((line) => {
    const [, , controllers, group] = /^(\d+):([^:]*):(\/.*)$/.exec(line) ?? []
    return controllers === undefined || group === undefined
      ? []
      : [{ controllers: controllers.split(","), group }]
  })
  const all = await mounts()
  const v1 = memberships.find((membership) => membership.controllers.includes("cpu"))
  const v1Mount = all.find((mount) => mount.type === "cgroup" && mount.options.includes("cpu"))
  if (v1 !== undefined && v1Mount !== undefined)
    return within(v1Mount, v1.group).map((directory) => ({ version: 1, directory }))
  const v2 = memberships.find((membership) => membership.controllers.join() === "")
  const v2Mount = all.find((mount) => mount.type === "cgroup2")
  if (v2 !== undefined && v2Mount !== undefined)
    return within(v2Mount, v2.group).map((directory) => ({ version: 2, directory }))
  return []
}

/** The group's directory under the mount and its ancestors' up to the mount point. */
const within = (mount: Mount, group: string): ReadonlyArray<string> => {
  const relative = path.posix.relative(mount.root, group)
  // A group outside the mount's root (another namespace's view) has no directory here.
  if (relative.startsWith("..")) return []
  const directories: Array<string> = []
  for (let directory = path.join(mount.point, relative); ; directory = path.dirname(directory)) {
    directories.push(directory)
    if (directory === mount.point || directory === path.dirname(directory)) return directories
  }
}

/** Period less quota, in ms, when the quota is under one period; else 0. */
const freezeOf = async ({ version, directory }: Group): Promise<number> => {
  const read = (name: string) => readFile(path.join(directory, name), "utf8")
  const [quota, period] =
    version === 1
      ? [await read("cpu.cfs_quota_us"), await read("cpu.cfs_period_us")]
      : (await read("cpu.max")).trim().split(" ")
  const quotaUs = Number(quota)
  const periodUs = Number(period)
  // v1 writes -1 and v2 "max" for no quota.
  if (!(quotaUs > 0) || !(periodUs > 0)) return 0
  return Math.max(0, periodUs - quotaUs) / 1000
}
