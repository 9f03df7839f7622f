import assert from "node:assert/strict"
import { it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { Limit, PetId, type Pet } from "@petstore/core"
import { PostgresPetRepository } from "@petstore/storage-postgres"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Array, Effect, Option } from "effect"
import { postJson } from "@petstore/test-support/requests"
import { readPet, type PetBody } from "./harness.js"
import { processTestTimeout, startServerProcess } from "./server-process.js"

/**
 * The load-and-fault test: clients keep creating (with and without `Idempotency-Key`) and
 * listing, and `/readyz` is asked, while the database is taken away (new connections refused,
 * open ones terminated) and given back, the server process running throughout. No acknowledged
 * pet may be lost, a create retried with its key may not be made twice, every failure must be a
 * prompt 503 with the Error body and `Retry-After`, and the service must recover by itself.
 */

const clients = 12
const normalBeforeMs = 3_000
const outageMs = 5_000
/** Time given to the service to notice the database is back; requests after it must all pass. */
const recoveryMs = 4_000
const recoveredLoadMs = 5_000
/** A request that takes longer has hung. Storage failures must be answered well within it. */
const requestTimeoutMs = 12_000

type Phase = "before" | "outage" | "recovering" | "recovered"
type Operation = "create" | "keyed create" | "list" | "readyz"

interface Outcome {
  /** The phase the request was sent in, when it was also answered in it. */
  readonly phase: Phase | "in between"
  readonly operation: Operation
  readonly status: number
}

/** Every pet in the database, read through a connection pool of its own, not the server's. */
const petsInDatabase = (url: string): Promise<ReadonlyArray<Pet>> =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const repository = yield* PostgresPetRepository.make({ url })
        const pets: Array<Pet> = []
        let afterId = Option.none<PetId>()
        for (;;) {
          const page = yield* repository.list({
            status: Option.none(),
            afterId,
            limit: Limit.make(100),
          })
          pets.push(...page.pets)
          if (!page.hasMore) return pets
          afterId = Option.map(Array.last(page.pets), (pet) => pet.id)
        }
      }),
    ),
  )

/** Why a response to a request that storage may fail is not acceptable, if it is not. */
const problemWith = async (response: Response, success: number): Promise<string | undefined> => {
  if (response.status === success) return undefined
  const text = await response.text()
  if (response.status !== 503) return `${response.status} ${text}`
  const retryAfter = response.headers.get("Retry-After")
  const expected = { code: "storage_unavailable", status: 503 }
  const body: unknown = JSON.parse(text)
  const matches =
    typeof body === "object" &&
    body !== null &&
    Object.keys(body).sort().join() === "code,message,status" &&
    "code" in body &&
    body.code === expected.code &&
    "status" in body &&
    body.status === expected.status
  return retryAfter === "1" && matches ? undefined : `503 (Retry-After ${retryAfter}) ${text}`
}

await withTemporaryPostgresDatabase("PostgreSQL taken away under load", (database) => {
  it(
    "loses no acknowledged pet, answers 503 with Retry-After while the database is away, and recovers without a restart",
    { timeout: processTestTimeout },
    async () => {
      // The per-key rate limit off: reading every acknowledged pet back afterwards would
      // otherwise meet its 429s, which this test is not about.
      const server = await startServerProcess({
        storage: database.url,
        env: { PETSTORE_RATE_LIMIT: "off" },
      })
      let running = true
      try {
        let phase: Phase = "before"
        const outcomes: Array<Outcome> = []
        const acknowledged: Array<PetBody> = []
        const keyedNames = new Set<string>()
        const problems: Array<string> = []

        /** Sends a request, records how it went, and gives the response if it is a success. */
        const attempt = async (
          operation: Operation,
          success: number,
          send: (signal: AbortSignal) => Promise<Response>,
        ): Promise<Response | undefined> => {
          const startedIn = phase
          try {
            const response = await send(AbortSignal.timeout(requestTimeoutMs))
            outcomes.push({
              phase: phase === startedIn ? startedIn : "in between",
              operation,
              status: response.status,
            })
            if (response.status === success) return response
            const problem = await problemWith(response, success)
            if (problem !== undefined) problems.push(`${operation} in ${startedIn}: ${problem}`)
          } catch (error) {
            problems.push(`${operation} in ${startedIn}: ${String(error)}`)
          }
          return undefined
        }

        const client = async (clientId: number) => {
          // A keyed create that failed is retried with the same key until it is acknowledged.
          let retry: { readonly key: string; readonly name: string } | undefined
          for (let i = 0; running; i++) {
            const keyed =
              retry ??
              (i % 2 === 0
                ? { key: `k-${clientId}-${i}`, name: `keyed ${clientId} ${i}` }
                : undefined)
            const name = keyed?.name ?? `plain ${clientId} ${i}`
            const created = await attempt(keyed ? "keyed create" : "create", 201, (signal) =>
              server.api("/pets", {
                ...postJson({ name, categoryId: clientId }),
                headers: {
                  "Content-Type": "application/json",
                  ...(keyed === undefined ? {} : { "Idempotency-Key": keyed.key }),
                },
                signal,
              }),
            )
            if (created !== undefined) {
              acknowledged.push(await readPet(created))
              if (keyed !== undefined) keyedNames.add(keyed.name)
            }
            retry = created === undefined ? keyed : undefined

            const listed = await attempt("list", 200, (signal) =>
              server.api("/pets?limit=20", { signal }),
            )
            await listed?.arrayBuffer()
          }
        }

        // `/readyz` asked all along, as an orchestrator would.
        const probeReadiness = async () => {
          while (running) {
            const ready = await attempt("readyz", 200, (signal) =>
              fetch(`${server.origin}/readyz`, { signal }),
            )
            await ready?.arrayBuffer()
            await sleep(200)
          }
        }

        const load = Promise.all([...Array.makeBy(clients, client), probeReadiness()])
        await sleep(normalBeforeMs)
        phase = "outage"
        await database.refuseConnections()
        await sleep(outageMs)
        await database.allowConnections()
        phase = "recovering"
        await sleep(recoveryMs)
        phase = "recovered"
        await sleep(recoveredLoadMs)
        running = false
        await load

        assert.equal(
          problems.length,
          0,
          `a request hung or got an answer other than success or 503 storage_unavailable:\n${problems.slice(0, 5).join("\n")}`,
        )
        const statuses = (wanted: Phase, operation?: Operation) =>
          new Set(
            outcomes
              .filter((outcome) => outcome.phase === wanted)
              .filter((outcome) => operation === undefined || outcome.operation === operation)
              .map((outcome) => outcome.status),
          )
        assert.deepEqual(statuses("before"), new Set([200, 201]), "a request failed before")
        assert.ok(statuses("outage", "create").has(503), "no create failed during the outage")
        assert.ok(statuses("outage", "list").has(503), "no listing failed during the outage")
        assert.ok(
          statuses("outage", "readyz").has(503),
          "/readyz did not say 503 during the outage",
        )
        assert.deepEqual(
          statuses("recovered"),
          new Set([200, 201]),
          `requests still failed ${recoveryMs} ms after the database came back`,
        )
        assert.equal(server.child.exitCode, null, "the server process exited")

        // Every pet acknowledged with 201 is there, as the server and as the database say.
        for (const batch of Array.chunksOf(acknowledged, clients)) {
          await Promise.all(
            batch.map(async (pet) => {
              const found = await server.api(`/pets/${pet.id}`)
              assert.equal(found.status, 200, `pet ${pet.id} was acknowledged but is not found`)
              assert.deepEqual(await readPet(found), pet)
            }),
          )
        }
        const stored = await petsInDatabase(database.url)
        const storedById = new Map(stored.map((pet): [number, Pet] => [pet.id, pet]))
        for (const pet of acknowledged) {
          assert.equal(storedById.get(pet.id)?.name, pet.name, `pet ${pet.id} is not stored`)
        }
        // A create retried with its key until acknowledged made one pet, not one per attempt.
        const copies = (name: string) => stored.filter((pet) => pet.name === name).length
        for (const name of keyedNames) assert.equal(copies(name), 1, `"${name}" was made twice`)
      } finally {
        running = false
        await server.stop()
      }
    },
  )
})
