/**
 * How fast a core is now: the milliseconds a fixed piece of work takes in a fresh process pinned
 * to it (building pages of 20 pets and writing them as JSON, as a list does). On a virtual machine
 * the host's other guests change it from minute to minute, and this one reports no steal time: a
 * bench that compares runs minutes apart reads this beside each.
 */
import { execFile } from "node:child_process"

const work = `
const started = process.hrtime.bigint()
let bytes = 0
for (let page = 0; page < 20000; page++) {
  const pets = []
  for (let id = 0; id < 20; id++)
    pets.push({ id: page * 20 + id, name: "pet " + id, categoryId: id % 7, status: "available" })
  bytes += JSON.stringify(pets).length
}
process.stdout.write(String(Number(process.hrtime.bigint() - started) / 1e6) + " " + bytes)
`

/** The work's milliseconds on `core`, the best of three (a stray interrupt only ever slows it). */
export const coreWorkMs = async (core: number): Promise<number> => {
  const once = () =>
    new Promise<number>((resolve, reject) =>
      execFile("taskset", ["-c", String(core), process.execPath, "-e", work], (error, stdout) =>
        error ? reject(error) : resolve(Number(stdout.split(" ")[0])),
      ),
    )
  const times = [await once(), await once(), await once()]
  return Math.min(...times)
}
