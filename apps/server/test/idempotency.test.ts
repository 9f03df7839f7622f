import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { readPet } from "./harness.js"
import {
  listEveryPet,
  processTestTimeout,
  startServerProcess,
  type RunningServer,
} from "./server-process.js"

/** Idempotency-Key across restarts and processes; on one process, packages/http tests it. */

const directory = mkdtempSync(path.join(tmpdir(), "petstore-idempotency-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const create = (
  send: (path: string, init: RequestInit) => Promise<Response>,
  body: string,
  key?: string,
  authorization?: string,
) =>
  send("/pets", {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      ...(key === undefined ? {} : { "Idempotency-Key": key }),
      ...(authorization === undefined ? {} : { Authorization: authorization }),
    },
  })

let keys = 0
const freshKey = () => `key-${process.pid}-${++keys}-${Math.random().toString(36).slice(2)}`

describe("Idempotency-Key across restarts and processes", () => {
  it(
    "on an SQLite file, a retry after kill -9 replays the pet the first request created",
    { timeout: processTestTimeout },
    async () => {
      const storage = `file:${path.join(directory, "killed.db")}`
      const key = freshKey()
      const body = JSON.stringify({ name: "Survivor", categoryId: 11 })
      const first = await startServerProcess({ storage })
      const created = await readPet(await create(first.api, body, key))
      first.child.kill("SIGKILL")
      assert.equal((await first.exited).signal, "SIGKILL")

      const second = await startServerProcess({ storage })
      try {
        const retry = await create(second.api, body, key)
        assert.equal(retry.status, 201)
        assert.equal(retry.headers.get("idempotent-replayed"), "true")
        assert.deepEqual(await readPet(retry), created)
        const pets = await listEveryPet(second, "/v1/pets?limit=100")
        assert.equal(pets.filter((pet) => pet.name === "Survivor").length, 1)
      } finally {
        await second.stop()
      }
    },
  )
})

await withTemporaryPostgresDatabase("two server processes on one PostgreSQL", (database) => {
  it("receiving the same key at once create one pet", { timeout: processTestTimeout }, async () => {
    const servers: Array<RunningServer> = await Promise.all([
      startServerProcess({ storage: database.url }),
      startServerProcess({ storage: database.url }),
    ])
    try {
      for (let round = 0; round < 10; round++) {
        const key = freshKey()
        const body = JSON.stringify({ name: `Race ${round}`, categoryId: 12 })
        const answers = await Promise.all(
          servers.flatMap((server) => [
            create(server.api, body, key),
            create(server.api, body, key),
          ]),
        )
        const ids = new Set<number>()
        for (const answer of answers) {
          assert.ok([201, 409].includes(answer.status), `${answer.status}`)
          if (answer.status === 201) ids.add((await readPet(answer)).id)
        }
        assert.equal(ids.size, 1, `round ${round}`)
      }
      const pets = await listEveryPet(servers[0] ?? assert.fail(), "/v1/pets?limit=100")
      for (let round = 0; round < 10; round++) {
        assert.equal(pets.filter((pet) => pet.name === `Race ${round}`).length, 1)
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
    }
  })
})
