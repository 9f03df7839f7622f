import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, it } from "node:test"
import { migrate } from "@petstore/storage/sql"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Effect } from "effect"
import {
  assertSummaryOnly,
  processTestTimeout,
  runStorageCli,
  spawnStorageCli,
  summaryCounts,
  withSql,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-backup-progress-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const pets = 60_000

await withTemporaryPostgresDatabase("what a backup shows", (database) => {
  it(
    "on a terminal, rows copied of the total and the rate on one line, cleared before the summary; piped, the summary alone",
    { timeout: processTestTimeout },
    async () => {
      const { url } = await database.createAnother()
      await withSql(url, (sql) =>
        Effect.zipRight(
          migrate,
          sql`INSERT INTO pets (name, category_id)
              SELECT 'pet ' || g, g FROM generate_series(1, ${pets}) g`,
        ),
      )
      const onTerminal = await spawnStorageCli(
        ["backup", path.join(directory, "terminal.backup")],
        url,
        {
          terminal: true,
        },
      ).exited
      assert.equal(onTerminal.code, 0, onTerminal.stdout)
      const shown = onTerminal.stdout.replaceAll("\r\n", "\n")
      const progress = [
        ...shown.matchAll(/\r\x1b\[Kbackup: ([\d,]+) of 60,000 rows \((\d+)%\), [\d,]+ rows\/s/g),
      ]
      assert.ok(progress.length > 0, `no progress line:\n${JSON.stringify(shown)}`)
      const summary = /\r\x1b\[K(backed up [^\n]*)\n$/.exec(shown)?.[1]
      assert.ok(
        summary !== undefined,
        `the summary does not follow the cleared line:\n${JSON.stringify(shown)}`,
      )
      assert.equal(summaryCounts(summary).pets, pets)

      const piped = await runStorageCli(["backup", path.join(directory, "piped.backup")], url)
      assert.equal(summaryCounts(assertSummaryOnly(piped)).pets, pets)
    },
  )
})
