import assert from "node:assert/strict"
import { it } from "node:test"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { assertError } from "@petstore/test-support/error-body"
import { postJson } from "@petstore/test-support/requests"
import { readPet, readPets, type PetBody } from "./harness.js"
import {
  listEveryPet,
  nextLink,
  processTestTimeout,
  startServerProcess,
  type RunningServer,
} from "./server-process.js"

const statuses = ["available", "pending", "sold"] as const

/** Creates `count` pets, `concurrency` at a time, listing between creates; returns them. */
const createWhileListing = async (server: RunningServer, prefix: string, count: number) => {
  const created: Array<PetBody> = []
  const worker = async (workerId: number) => {
    for (let i = workerId; i < count; i += 8) {
      const response = await server.api(
        "/pets",
        postJson({ name: `${prefix} ${i}`, categoryId: i, status: statuses[i % 3] }),
      )
      assert.equal(response.status, 201)
      created.push(await readPet(response))
      const listed = await server.api("/pets?limit=100&status=sold")
      assert.equal(listed.status, 200)
      await listed.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, workerId) => worker(workerId)))
  return created
}

const ids = (pets: ReadonlyArray<PetBody>) => pets.map((pet) => pet.id)

await withTemporaryPostgresDatabase("PostgreSQL shared by several server processes", (database) => {
  it(
    "two processes on one database: unique ids, each sees the other's pets, cursors work on both",
    { timeout: processTestTimeout },
    async () => {
      const fresh = await database.createAnother()
      // Started together, so they also race to migrate the fresh database.
      const [a, b] = await Promise.all([
        startServerProcess({ storage: fresh.url }),
        startServerProcess({ storage: fresh.url }),
      ])
      try {
        const [fromA, fromB] = await Promise.all([
          createWhileListing(a, "from a", 80),
          createWhileListing(b, "from b", 80),
        ])
        const created = [...fromA, ...fromB]
        assert.equal(new Set(ids(created)).size, 160, "an id was assigned twice")

        const expected = [...created].sort((left, right) => left.id - right.id)
        assert.deepEqual(await listEveryPet(a, "/v1/pets?limit=100"), expected)
        assert.deepEqual(await listEveryPet(b, "/v1/pets?limit=100"), expected)

        const cursor = nextLink(await a.api("/pets?limit=7&status=pending"))
        const [onA, onB] = await Promise.all([a.request(cursor), b.request(cursor)])
        assert.equal(onB.status, 200)
        const page = await readPets(onB)
        assert.deepEqual(page, await readPets(onA))
        assert.deepEqual(page, expected.filter((pet) => pet.status === "pending").slice(7, 14))
      } finally {
        await Promise.all([a.stop(), b.stop()])
      }
    },
  )

  it(
    "answers 503 with the Error body while the database is down, and recovers when it is back",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({ storage: database.url })
      try {
        const before = await readPet(
          await server.api("/pets", postJson({ name: "before the outage", categoryId: 1 })),
        )

        await database.refuseConnections()
        try {
          const create = await server.api("/pets", postJson({ name: "during", categoryId: 1 }))
          assert.equal(create.headers.get("Retry-After"), "1")
          await assertError(create, 503, "storage_unavailable")
          await assertError(await server.api("/pets"), 503, "storage_unavailable")
          await assertError(await server.api(`/pets/${before.id}`), 503, "storage_unavailable")
        } finally {
          await database.allowConnections()
        }

        const recovered = await server.api("/pets", postJson({ name: "after", categoryId: 1 }))
        assert.equal(recovered.status, 201)
        assert.ok((await readPet(recovered)).id > before.id)
        const found = await server.api(`/pets/${before.id}`)
        assert.deepEqual(await readPet(found), before)
        assert.equal(server.child.exitCode, null, "the process exited")
      } finally {
        await server.stop()
      }
    },
  )
})
