import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

/** Clock ticks per second, the unit of /proc/<pid>/stat's CPU times. */
export const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim())

/** utime and stime of a process (every thread of it), in clock ticks. */
export const cpuTicks = (pid: number): { readonly user: number; readonly system: number } => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { user: Number(fields[11]), system: Number(fields[12]) }
}

/** The CPU a process has used (every thread of it, user and system), in seconds. */
export const cpuSeconds = (pid: number): number => {
  const { user, system } = cpuTicks(pid)
  return (user + system) / clockTicks
}
