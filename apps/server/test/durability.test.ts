import assert from "node:assert/strict"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { sqliteIntegrityCheck } from "@petstore/storage-sqlite/testing"
import { postJson } from "@petstore/test-support/requests"
import { readPet, readPets, type PetBody } from "./harness.js"
import {
  listEveryPet,
  nextLink,
  processTestTimeout,
  startServerProcess,
  type RunningServer,
} from "./server-process.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-durability-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const statuses = ["available", "pending", "sold", undefined] as const

const createPet = async (server: RunningServer, name: string, status?: string) => {
  const response = await server.api("/pets", postJson({ name, categoryId: 7, status }))
  assert.equal(response.status, 201)
  return readPet(response)
}

const maxId = (pets: ReadonlyArray<PetBody>) => Math.max(...pets.map((pet) => pet.id))

/**
 * Pets, ids and a cursor taken before a graceful restart are all there after it, and the
 * restarted server assigns ids above every earlier one.
 */
const survivesRestart = async (storage: string) => {
  const first = await startServerProcess({ storage })
  const created: Array<PetBody> = []
  for (let i = 0; i < 7; i++) created.push(await createPet(first, `before ${i}`, "sold"))
  const firstPage = await first.api("/pets?status=sold&limit=3")
  const cursor = nextLink(firstPage)
  assert.deepEqual(await first.stop(), { code: 0, signal: null })

  const second = await startServerProcess({ storage })
  try {
    const continued = await second.request(cursor)
    assert.equal(continued.status, 200)
    assert.deepEqual(await readPets(continued), created.slice(3, 6))
    for (const pet of created) {
      const found = await second.api(`/pets/${pet.id}`)
      assert.equal(found.status, 200)
      assert.deepEqual(await readPet(found), pet)
    }
    const later = await createPet(second, "after restart")
    assert.ok(later.id > maxId(created), `id ${later.id} reuses or precedes an earlier one`)
  } finally {
    await second.stop()
  }
}

describe("SQLite file store", () => {
  it(
    "is the default: data/petstore.db under the working directory, created on first start",
    { timeout: processTestTimeout },
    async () => {
      const workingDirectory = mkdtempSync(path.join(directory, "fresh-clone-"))
      const options = { storage: undefined, cwd: workingDirectory }
      const first = await startServerProcess(options)
      const filename = path.join(workingDirectory, "data", "petstore.db")
      assert.match(first.stdout(), new RegExp(`"storage":"SQLite file ${filename}"`))
      const pet = await createPet(first, "Rex")
      await first.stop()

      const second = await startServerProcess(options)
      try {
        assert.deepEqual(await readPet(await second.api(`/pets/${pet.id}`)), pet)
      } finally {
        await second.stop()
      }
      assert.ok(existsSync(filename))
    },
  )

  it("keeps pets, ids and cursors across a graceful restart", { timeout: processTestTimeout }, () =>
    survivesRestart(`file:${path.join(directory, "restart.db")}`),
  )

  it(
    "after kill -9 mid-stream keeps every pet whose 201 was received, in a sound file, and reuses no id",
    { timeout: processTestTimeout },
    async () => {
      const filename = path.join(directory, "crash.db")
      const storage = `file:${filename}`
      const first = await startServerProcess({ storage })
      const acknowledged: Array<PetBody> = []
      const unexpected: Array<number> = []

      // Each client creates pets one after another until its connection is cut.
      const client = async (clientId: number) => {
        for (let i = 0; ; i++) {
          try {
            const status = statuses[i % statuses.length]
            const response = await first.api(
              "/pets",
              postJson({ name: `client ${clientId} pet ${i}`, categoryId: clientId, status }),
            )
            if (response.status !== 201) unexpected.push(response.status)
            else acknowledged.push(await readPet(response))
          } catch {
            return
          }
        }
      }
      const clients = Array.from({ length: 32 }, (_, clientId) => client(clientId))
      const deadline = Date.now() + 20_000
      while (acknowledged.length < 400 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      first.child.kill("SIGKILL")
      const killed = await first.exited
      await Promise.all(clients)
      assert.equal(killed.signal, "SIGKILL")
      assert.deepEqual(unexpected, [])
      assert.ok(
        acknowledged.length >= 400,
        `only ${acknowledged.length} creates before the deadline`,
      )

      const second = await startServerProcess({ storage })
      try {
        const stored = await listEveryPet(second, "/v1/pets?limit=100")
        const storedById = new Map(stored.map((pet) => [pet.id, pet]))
        assert.equal(storedById.size, stored.length, "an id appears twice")
        for (const pet of acknowledged) assert.deepEqual(storedById.get(pet.id), pet)

        const next = await createPet(second, "after the crash")
        assert.ok(next.id > maxId(stored), `id ${next.id} is not above every stored id`)
      } finally {
        await second.stop()
      }
      assert.deepEqual(await sqliteIntegrityCheck(filename), ["ok"])
    },
  )
})

await withTemporaryPostgresDatabase("PostgreSQL store", (database) => {
  it("keeps pets, ids and cursors across a graceful restart", { timeout: processTestTimeout }, () =>
    survivesRestart(database.url),
  )
})
