/**
 * The floor for a durable create: better-sqlite3 alone inserting one pet and committing it, one
 * after another, on the service's own file (WAL, `synchronous=FULL`, the service's schema and
 * statement), each timed. lone-creates.ts runs it under `taskset -c 0` while the service, on
 * the same file, is idle. Prints `{"latenciesMicros":[…],"cpuMicros":…}`; `cpuMicros` is this
 * process's CPU time over the measured commits.
 *
 *   node --import tsx raw-sqlite-commits.ts <file> <warm-up count> <count>
 */
import Database from "better-sqlite3"
import { serviceInsert } from "./service-insert.js"

const [file = "", warmupText = "0", countText = "0"] = process.argv.slice(2)
const db = new Database(file)
db.pragma("busy_timeout = 5000")
db.pragma("synchronous = FULL")
if (db.pragma("journal_mode", { simple: true }) !== "wal")
  throw new Error(`${file} is not in WAL mode`)
const insert = db.prepare(serviceInsert)
const begin = db.prepare("BEGIN IMMEDIATE")
const commit = db.prepare("COMMIT")
const insertAndCommit = () => {
  begin.run()
  insert.all("Rex", 1, "available")
  commit.run()
}

for (let i = 0; i < Number(warmupText); i++) insertAndCommit()
const latenciesMicros: Array<number> = []
const cpuBefore = process.cpuUsage()
for (let i = 0; i < Number(countText); i++) {
  const started = performance.now()
  insertAndCommit()
  latenciesMicros.push((performance.now() - started) * 1000)
}
const cpu = process.cpuUsage(cpuBefore)
db.close()
process.stdout.write(`${JSON.stringify({ latenciesMicros, cpuMicros: cpu.user + cpu.system })}\n`)
