import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { migrate } from "@petstore/storage/sql"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Effect } from "effect"
import {
  assertSummaryOnly,
  postPet,
  processTestTimeout,
  readPet,
  runStorageCli,
  startServer,
  summaryCounts,
  withSql,
  type PetBody,
  type Server,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-backup-load-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const seeded = 20_000

/** A store migrated as a server migrates it, holding `seeded` pets, so a backup has work to do. */
const seed = (storage: string) =>
  withSql(storage, (sql) =>
    Effect.gen(function* () {
      yield* migrate
      yield* sql.onDialectOrElse({
        pg: () =>
          sql`INSERT INTO pets (name, category_id)
              SELECT 'seed ' || g, g FROM generate_series(1, ${seeded}) g`,
        orElse: () =>
          sql`WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < ${seeded})
              INSERT INTO pets (name, category_id) SELECT 'seed ' || i, i FROM g`,
      })
    }),
  )

/** Clients creating pets without pause until `stop`; every answer must be 201. */
const keepCreating = (server: Server, clients: number) => {
  const acknowledged: Array<PetBody> = []
  const failures: Array<string> = []
  let stopped = false
  const client = async (id: number) => {
    for (let n = 0; !stopped; n++) {
      const response = await postPet(server, { name: `client ${id} pet ${n}`, categoryId: n })
      if (response.status === 201) acknowledged.push(await readPet(response))
      else failures.push(`${response.status} ${await response.text()}`)
    }
  }
  const done = Promise.all(Array.from({ length: clients }, (_, id) => client(id)))
  return {
    acknowledged,
    failures,
    stop: async () => {
      stopped = true
      await done
    },
  }
}

/**
 * A reader holding a snapshot of the store from before the load, as an operator's `sqlite3`
 * session may: SQLite cannot checkpoint past it, so every pet created meanwhile stays in the WAL
 * beside the file, and a backup that copied the file alone would miss them.
 */
const holdReadSnapshot = (storage: string) => {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  let taken = () => {}
  const held = new Promise<void>((resolve) => (taken = resolve))
  const done = withSql(storage, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT count(*) FROM pets`
        taken()
        yield* Effect.promise(() => released)
      }),
    ),
  )
  return {
    held,
    release: async () => {
      release()
      await done
    },
  }
}

const backedUpPets = (backup: string) =>
  withSql(
    `file:${backup}`,
    (sql) =>
      sql<{
        id: bigint
        name: string
        category_id: bigint
      }>`SELECT id, name, category_id FROM pets`,
    { wal: false },
  )

await withTemporaryPostgresDatabase("a backup taken while a server takes creates", (database) => {
  const stores = {
    "an SQLite file (VACUUM INTO), while another reader keeps recent commits in the WAL":
      async () => `file:${path.join(directory, "store.db")}`,
    "PostgreSQL (one REPEATABLE READ snapshot)": async () => (await database.createAnother()).url,
  }
  for (const [name, makeStore] of Object.entries(stores)) {
    describe(name, () => {
      it(
        "holds every pet acknowledged before it began, while creates and reads go on answering",
        { timeout: processTestTimeout },
        async () => {
          const storage = await makeStore()
          await seed(storage)
          const server = await startServer(storage)
          const reader = storage.startsWith("file:") ? holdReadSnapshot(storage) : undefined
          await reader?.held
          const load = keepCreating(server, 16)
          try {
            await sleep(300)
            const before = [...load.acknowledged]
            const backup = path.join(directory, `${before.length}.backup`)
            const during = runStorageCli(["backup", backup], storage)
            const reads: Array<number> = []
            for (let finished = false; !finished;) {
              const response = await server.api("/pets?limit=100")
              await response.arrayBuffer()
              reads.push(response.status)
              finished = await Promise.race([during.then(() => true), sleep(20).then(() => false)])
            }
            const line = assertSummaryOnly(await during)
            const acknowledgedMeanwhile = load.acknowledged.length - before.length
            await load.stop()

            assert.ok(before.length > 0, "no create was acknowledged before the backup")
            assert.ok(acknowledgedMeanwhile > 0, "no create was acknowledged while the backup ran")
            assert.deepEqual(load.failures, [], "a create failed while the backup ran")
            assert.ok(
              reads.every((status) => status === 200),
              `reads answered ${reads.join(" ")}`,
            )

            const stored = new Map((await backedUpPets(backup)).map((row) => [Number(row.id), row]))
            const missing = before.filter((pet) => {
              const row = stored.get(pet.id)
              return (
                row === undefined ||
                row.name !== pet.name ||
                Number(row.category_id) !== pet.categoryId
              )
            })
            assert.deepEqual(
              missing,
              [],
              `${missing.length} of ${before.length} acknowledged pets are not in the backup`,
            )
            assert.equal(summaryCounts(line).pets, stored.size)
            assert.ok(stored.size >= seeded + before.length)
          } finally {
            await load.stop()
            await reader?.release()
            await server.stop()
          }
        },
      )
    })
  }
})
