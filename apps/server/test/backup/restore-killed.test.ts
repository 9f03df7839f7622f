import assert from "node:assert/strict"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, before, describe, it } from "node:test"
import { CategoryId, NewPet } from "@petstore/core"
import { migrate } from "@petstore/storage/sql"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import { sqliteIntegrityCheck } from "@petstore/storage-sqlite/testing"
import { Effect } from "effect"
import {
  assertSummaryOnly,
  dumpData,
  dumpPostgres,
  fileState,
  filesIn,
  processTestTimeout,
  runStorageCli,
  spawnStorageCli,
  withSql,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-restore-killed-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const pets = 80_000
const idempotencyRecords = 20_000
const large = path.join(directory, "large.backup")

/** The processes under `pid` (`script`, then the shell it may run, then the CLI). */
const descendants = (pid: number): ReadonlyArray<number> => {
  const parents = new Map<number, number>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The command name, in parentheses, may hold spaces: the parent follows its closing one.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      parents.set(Number(entry), parent)
    } catch {
      // The process ended meanwhile.
    }
  }
  const found: Array<number> = []
  const visit = (parent: number) => {
    for (const [child, itsParent] of parents) {
      if (itsParent !== parent) continue
      found.push(child)
      visit(child)
    }
  }
  visit(pid)
  return found
}

const cliProcess = (pid: number) =>
  descendants(pid).find((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, "utf8").includes("cli/storage.js")
    } catch {
      return false
    }
  })

/**
 * Runs the restore on a terminal and `kill -9`s the CLI once its progress line shows it between
 * 10% and 90% of the rows copied; answers the percentage it had reached.
 */
const restoreKilledHalfway = async (args: ReadonlyArray<string>, storage: string) => {
  const cli = spawnStorageCli(["restore", ...args], storage, { terminal: true })
  const reached = await new Promise<number>((resolve, reject) => {
    const watch = () => {
      const shown = [
        ...cli.stdout().matchAll(/restore: [\d,]+ of [\d,]+ rows \((\d+)%\), [\d,]+ rows\/s/g),
      ]
      const percent = Number(shown.at(-1)?.[1] ?? 0)
      if (percent < 10) return
      const pid = cliProcess(cli.child.pid ?? 0)
      if (percent > 90 || pid === undefined) {
        reject(new Error(`too late to kill the restore (${percent}%):\n${cli.stdout()}`))
        return
      }
      process.kill(pid, "SIGKILL")
      cli.child.stdout.off("data", watch)
      resolve(percent)
    }
    cli.child.stdout.on("data", watch)
    void cli.exited.then((exit) =>
      reject(new Error(`the restore ended before it was killed: ${JSON.stringify(exit)}`)),
    )
  })
  await cli.exited
  return reached
}

before(
  async () => {
    const source = path.join(directory, "source.db")
    await withSql(`file:${source}`, (sql) =>
      Effect.gen(function* () {
        yield* migrate
        yield* sql`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ${pets})
                   INSERT INTO pets (name, category_id, status)
                   SELECT 'pet ' || i || ' 🐕', i, 'sold' FROM g`
        yield* sql`INSERT INTO idempotency_keys
                   SELECT 'env:1', 'key-' || id, 'fingerprint', id, 1700000000000
                   FROM pets WHERE id <= ${idempotencyRecords}`
      }),
    )
    assertSummaryOnly(await runStorageCli(["backup", large], `file:${source}`))
  },
  { timeout: processTestTimeout },
)

/** A store holding a few pets of its own, made as a server makes it, closed. */
const smallSqliteStore = (filename: string) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const repository = yield* SqlitePetRepository.make({ filename })
        for (const name of ["kept 1", "kept 2", "kept 3"]) {
          yield* repository.create(NewPet.make({ name, categoryId: CategoryId.make(1) }))
        }
      }),
    ),
  )

await withTemporaryPostgresDatabase("a restore killed halfway (kill -9)", (database) => {
  describe(`of ${pets + idempotencyRecords} rows`, () => {
    it(
      "leaves a PostgreSQL database holding data row for row as it was (--replace)",
      { timeout: processTestTimeout },
      async (t) => {
        const { url } = await database.createAnother()
        await withSql(url, (sql) =>
          Effect.zipRight(migrate, sql`INSERT INTO pets (name, category_id) VALUES ('kept', 1)`),
        )
        const before = await dumpPostgres(url)
        t.diagnostic(`killed at ${await restoreKilledHalfway([large, "--replace"], url)}%`)
        assert.deepEqual(await dumpPostgres(url), before)
      },
    )

    it(
      "leaves an SQLite store holding data as it was, its file byte for byte (--replace)",
      { timeout: processTestTimeout },
      async (t) => {
        const filename = path.join(directory, "existing.db")
        await smallSqliteStore(filename)
        const before = {
          file: fileState(filename)["existing.db"],
          data: await dumpData(`file:${filename}`),
        }
        t.diagnostic(
          `killed at ${await restoreKilledHalfway([large, "--replace"], `file:${filename}`)}%`,
        )
        // What the killed transaction wrote is in the WAL beside the file, never in the file.
        assert.equal(fileState(filename)["existing.db"], before.file)
        assert.deepEqual(await sqliteIntegrityCheck(filename), ["ok"])
        assert.deepEqual(await dumpData(`file:${filename}`), before.data)
      },
    )

    it(
      "leaves no store where there was none: only its hidden temporary file",
      { timeout: processTestTimeout },
      async (t) => {
        const folder = path.join(directory, "new")
        mkdirSync(folder)
        const store = `file:${path.join(folder, "store.db")}`
        t.diagnostic(`killed at ${await restoreKilledHalfway([large], store)}%`)
        const left = filesIn(folder)
        assert.ok(
          left.every((name) =>
            /^\.store\.db\.partial-\d+-[0-9a-f]{8}(-journal|-wal|-shm)?$/.test(name),
          ),
          `left behind: ${left.join(", ")}`,
        )
      },
    )
  })
})
