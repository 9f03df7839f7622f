import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import {
  assertSummaryOnly,
  postPet,
  processTestTimeout,
  readPet,
  readPets,
  runStorageCli,
  startServer,
  summaryCounts,
  type PetBody,
  type Server,
} from "./backup-harness.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-move-"))
after(() => rmSync(directory, { recursive: true, force: true }))

interface Answer {
  readonly server: string
  readonly status: number
  readonly retryAfter: string | null
  readonly pet?: PetBody
}

/**
 * Clients that keep creating, each on whichever servers `servers()` names at the time (as a
 * load balancer would send them), recording every answer.
 */
const keepCreating = (servers: () => ReadonlyArray<readonly [string, Server]>, clients: number) => {
  const answers: Array<Answer> = []
  let stopped = false
  const client = async (id: number) => {
    for (let n = 0; !stopped; n++) {
      const choices = servers()
      const [name, server] = choices[n % choices.length] ?? []
      if (name === undefined || server === undefined) break
      const response = await postPet(server, { name: `client ${id} pet ${n}`, categoryId: n })
      const retryAfter = response.headers.get("Retry-After")
      if (response.status === 201) {
        answers.push({ server: name, status: 201, retryAfter, pet: await readPet(response) })
      } else {
        await response.arrayBuffer()
        answers.push({ server: name, status: response.status, retryAfter })
        // A client told to retry later does so.
        await sleep(25)
      }
    }
  }
  const done = Promise.all(Array.from({ length: clients }, (_, id) => client(id)))
  return {
    answers,
    stop: async () => {
      stopped = true
      await done
    },
  }
}

/** Every pet a server lists, following its next-page links. */
const listEveryPet = async (server: Server) => {
  const pets: Array<PetBody> = []
  let response = await server.api("/pets?limit=100")
  for (;;) {
    assert.equal(response.status, 200)
    pets.push(...(await readPets(response)))
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1]
    if (next === undefined) return pets
    response = await server.api(next.slice(new URL(server.url).pathname.length))
  }
}

await withTemporaryPostgresDatabase("moving from the SQLite file to PostgreSQL", (database) => {
  it(
    "freeze, backup, restore, two servers on PostgreSQL: every acknowledged pet served by both, new ids unique and above, reads served throughout",
    { timeout: processTestTimeout },
    async (t) => {
      const started = Date.now()
      const mark = (what: string) => t.diagnostic(`${what} at ${Date.now() - started} ms`)
      const sqlite = `file:${path.join(directory, "petstore.db")}`
      const postgres = (await database.createAnother()).url
      const backup = path.join(directory, "move.backup")
      const old = await startServer(sqlite)
      let serving: ReadonlyArray<readonly [string, Server]> = [["old", old]]
      const load = keepCreating(() => serving, 4)
      const newServers: Array<Server> = []
      try {
        await sleep(300)
        mark("started")
        assertSummaryOnly(await runStorageCli(["freeze"], sqlite))
        mark("frozen")
        const frozenAt = load.answers.length

        // Frozen: creates are refused with 503 and Retry-After, reads go on.
        const reads: Array<number> = []
        for (let i = 0; i < 10; i++) {
          const response = await old.api("/pets?limit=5")
          await response.arrayBuffer()
          reads.push(response.status)
        }
        const backedUp = assertSummaryOnly(await runStorageCli(["backup", backup], sqlite))
        assert.match(backedUp, /the source was frozen \(since /)
        const restored = assertSummaryOnly(await runStorageCli(["restore", backup], postgres))
        const lastRestoredId = summaryCounts(restored).lastPetId
        mark("restored")

        newServers.push(...(await Promise.all([startServer(postgres), startServer(postgres)])))
        const [first, second] = newServers
        assert.ok(first !== undefined && second !== undefined)
        const frozenAnswers = load.answers.slice(frozenAt)
        serving = [
          ["first", first],
          ["second", second],
        ]
        mark("moved")
        await sleep(500)
        await load.stop()
        t.diagnostic(`${load.answers.length} answers`)

        const fromOld = load.answers.filter((answer) => answer.server === "old")
        const acknowledgedByOld = fromOld.flatMap((answer) =>
          answer.pet === undefined ? [] : [answer.pet],
        )
        assert.ok(acknowledgedByOld.length > 0, "the old server acknowledged no create")
        const refused = frozenAnswers.filter(
          (answer) => answer.server === "old" && answer.status !== 201,
        )
        assert.ok(refused.length > 0, "no create reached the old server while it was frozen")
        for (const answer of refused) {
          assert.equal(answer.status, 503)
          assert.equal(answer.retryAfter, "1")
        }
        assert.deepEqual(reads, Array(10).fill(200), "reads were not served while frozen")
        // From the moment `freeze` returned, the old server acknowledged nothing.
        assert.deepEqual(
          frozenAnswers.filter((answer) => answer.server === "old" && answer.status === 201),
          [],
        )
        assert.equal(summaryCounts(backedUp).pets, acknowledgedByOld.length)

        const acknowledgedByNew = load.answers.filter(
          (answer) => answer.server !== "old" && answer.status === 201,
        )
        assert.ok(acknowledgedByNew.length > 0, "no create succeeded on PostgreSQL")
        assert.ok(
          load.answers.every((answer) => answer.server === "old" || answer.status === 201),
          "a create on PostgreSQL failed",
        )
        const newIds = acknowledgedByNew.map((answer) => answer.pet?.id ?? 0)
        assert.equal(new Set(newIds).size, newIds.length, "an id was given twice")
        assert.ok(Math.min(...newIds) > lastRestoredId, "a new id is not above the restored ones")

        const everyPet = [
          ...acknowledgedByOld,
          ...acknowledgedByNew.flatMap((answer) => answer.pet ?? []),
        ].sort((left, right) => left.id - right.id)
        for (const server of newServers) assert.deepEqual(await listEveryPet(server), everyPet)
      } finally {
        await load.stop()
        await Promise.all([old.stop(), ...newServers.map((server) => server.stop())])
      }
    },
  )
})
