import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import { withTemporaryPostgresDatabase } from "@petstore/storage-postgres/testing"
import { Effect, Redacted } from "effect"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { readPet } from "./harness.js"
import {
  attribute,
  childrenOf,
  spanTree,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "./otlp-receiver.js"
import type { RunningServer } from "./server-process.js"
import {
  accessLine,
  assertNoneCarries,
  createPetRequest,
  newCaller,
  numberAttribute,
  serverSpanOf,
  startTracedServer,
  tracingApiKey,
  waitForTrace,
  type Caller,
} from "./tracing-harness.js"

// The server process on SQLite and PostgreSQL, exporting to a real OTLP/HTTP receiver: a request
// followed from the caller's trace through the use case and the repository to the SQL statement
// and the group-commit batch that committed it, and a storage failure told as an error.

const directory = mkdtempSync(path.join(tmpdir(), "petstore-tracing-storage-"))
after(() => rmSync(directory, { recursive: true, force: true }))

const processTimeout = { timeout: 40_000 }

/** A store, and a way to run a statement on it behind the server's back. */
interface Store {
  readonly storage: string
  readonly system: "sqlite" | "postgresql"
  readonly run: (statement: string) => Promise<void>
}

const sqliteStore = (name: string): Store => {
  const filename = path.join(directory, `${name}.db`)
  return {
    storage: `file:${filename}`,
    system: "sqlite",
    run: (statement) =>
      Effect.runPromise(
        Effect.scoped(
          Effect.flatMap(
            SqliteClient.make({ filename }).pipe(
              Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
            ),
            (sql) => Effect.asVoid(sql.unsafe(statement)),
          ),
        ),
      ),
  }
}

const postgresStore = (url: string): Store => ({
  storage: url,
  system: "postgresql",
  run: (statement) =>
    Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(
          PgClient.make({ url: Redacted.make(url), maxConnections: 1 }).pipe(
            Effect.provideServiceEffect(Reactivity.Reactivity, Reactivity.make),
          ),
          (sql) => Effect.asVoid(sql.unsafe(statement)),
        ),
      ),
    ),
})

const only = (spans: ReadonlyArray<ReceivedSpan>, name: string): ReceivedSpan => {
  const found = spans.filter((span) => span.name === name)
  assert.equal(found.length, 1, `${found.length} spans named ${name}`)
  const [span] = found
  assert.ok(span !== undefined)
  return span
}

/** Every span under `span`, at any depth. */
const descendantsOf = (
  spans: ReadonlyArray<ReceivedSpan>,
  span: ReceivedSpan,
): ReadonlyArray<ReceivedSpan> =>
  childrenOf(spans, span).flatMap((child) => [child, ...descendantsOf(spans, child)])

const statementsUnder = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan) =>
  descendantsOf(spans, span).filter((child) => child.name === "sql.execute")

const queryText = (span: ReceivedSpan) => String(attribute(span, "db.query.text"))

const create = async (server: RunningServer, caller: Caller, name: string) => {
  const response = await server.api(
    "/pets",
    createPetRequest(name, { traceparent: caller.traceparent }),
  )
  assert.equal(response.status, 201)
  return readPet(response)
}

/** A create's trace: server → createPet → PetRepository.create → its wait and its batch. */
const createTrace = async (receiver: OtlpReceiver, caller: Caller) => {
  const spans = await waitForTrace(receiver, caller.traceId, 5)
  const server = serverSpanOf(spans, caller.traceId)
  assert.ok(server !== undefined)
  assert.equal(server.parentSpanId, caller.spanId)
  const [useCase] = childrenOf(spans, server)
  assert.equal(useCase?.name, "createPet")
  const [repository] = childrenOf(spans, useCase)
  assert.equal(repository?.name, "PetRepository.create")
  const wait = only(childrenOf(spans, repository), "group-commit.wait")
  return { spans, server, repository, wait }
}

const storageTraces = (store: () => Promise<Store>) => {
  it(
    "a lone create's trace reaches its own INSERT, inside the batch that committed it",
    processTimeout,
    async () => {
      const { storage, system } = await store()
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer(storage, receiver)
      try {
        const caller = newCaller()
        await create(server, caller, "Rex")
        const { spans, repository, wait } = await createTrace(receiver, caller)
        const batch = only(childrenOf(spans, repository), "group-commit.batch")
        assert.equal(numberAttribute(batch, "petstore.batch.size"), 1)
        assert.deepEqual(batch.links, [])
        assert.equal(attribute(wait, "petstore.batch.span_id"), batch.spanId)
        assert.equal(attribute(wait, "petstore.batch.trace_id"), caller.traceId)
        assert.ok(wait.events.some((event) => event.name === "group-commit.batch.started"))
        const inserts = statementsUnder(spans, batch).filter((span) =>
          /^\s*INSERT INTO pets\b/i.test(queryText(span)),
        )
        assert.equal(inserts.length, 1, spanTree(spans, caller.traceId).join("\n"))
        const [insert] = inserts
        assert.ok(insert !== undefined)
        assert.equal(insert.kind, "CLIENT")
        assert.equal(attribute(insert, "db.system.name"), system)
        // The statement without its values: the name is a parameter.
        assert.doesNotMatch(queryText(insert), /Rex/)

        const listing = newCaller()
        const listed = await server.api("/pets?status=available&limit=7", {
          headers: { traceparent: listing.traceparent },
        })
        assert.equal(listed.status, 200)
        const listSpans = await waitForTrace(receiver, listing.traceId, 4)
        assert.deepEqual(spanTree(listSpans, listing.traceId).slice(0, 3), [
          "GET /v1/pets",
          "  listPets",
          "    PetRepository.list",
        ])
        const [select] = statementsUnder(listSpans, only(listSpans, "PetRepository.list"))
        assert.ok(select !== undefined, spanTree(listSpans, listing.traceId).join("\n"))
        assert.match(queryText(select), /^\s*SELECT\b/i)
        assert.doesNotMatch(queryText(select), /available|\b7\b/)
        assertNoneCarries(receiver.spans(), [tracingApiKey])
      } finally {
        await server.stop()
        await receiver.close()
      }
    },
  )

  it(
    "concurrent creates share a batch: the first one's child, linked to every other, each told which batch took it",
    processTimeout,
    async () => {
      const { storage } = await store()
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer(storage, receiver)
      try {
        // Bursts until one batch carries several creates (they nearly always do at once).
        let shared: { batch: ReceivedSpan; callers: ReadonlyArray<Caller> } | undefined
        for (let burst = 0; burst < 5 && shared === undefined; burst++) {
          const callers = Array.from({ length: 32 }, newCaller)
          await Promise.all(
            callers.map((caller, index) => create(server, caller, `Burst ${index}`)),
          )
          const traceIds = new Set(callers.map((caller) => caller.traceId))
          const spans = await receiver.waitForSpans(
            (seen) =>
              callers.every(
                (caller) =>
                  seen.filter(
                    (span) => span.traceId === caller.traceId && span.name === "group-commit.wait",
                  ).length === 1,
              ),
            10_000,
          )
          const batch = spans.find(
            (span) =>
              span.name === "group-commit.batch" &&
              traceIds.has(span.traceId) &&
              (numberAttribute(span, "petstore.batch.size") ?? 0) > 1,
          )
          if (batch !== undefined) shared = { batch, callers }
        }
        assert.ok(shared !== undefined, "no batch ever carried two creates")
        const { batch, callers } = shared
        const spans = receiver.spans()
        const size = numberAttribute(batch, "petstore.batch.size") ?? 0
        // Told by every create it carried, through its wait span.
        const waits = spans.filter(
          (span) =>
            span.name === "group-commit.wait" &&
            attribute(span, "petstore.batch.span_id") === batch.spanId,
        )
        assert.equal(waits.length, size)
        for (const wait of waits) {
          assert.equal(attribute(wait, "petstore.batch.trace_id"), batch.traceId)
        }
        // The child of the first create's repository span, in its trace…
        const parent = spans.find((span) => span.spanId === batch.parentSpanId)
        assert.equal(parent?.name, "PetRepository.create")
        assert.equal(parent?.traceId, batch.traceId)
        // …and linked to each other's, in theirs.
        assert.equal(batch.links.length, size - 1)
        const repositorySpans = new Map(
          spans
            .filter((span) => span.name === "PetRepository.create")
            .map((span) => [span.spanId, span]),
        )
        const carried = new Set(waits.map((wait) => wait.traceId))
        for (const link of batch.links) {
          const linked = repositorySpans.get(link.spanId)
          assert.ok(linked !== undefined, `the link to ${link.spanId} is no create's span`)
          assert.equal(linked.traceId, link.traceId)
          assert.notEqual(link.traceId, batch.traceId)
          assert.ok(carried.has(link.traceId))
        }
        assert.ok(callers.some((caller) => caller.traceId === batch.traceId))
        // The batch's INSERT is in the first create's trace, under the batch.
        assert.ok(
          statementsUnder(spans, batch).some((span) =>
            /^\s*INSERT INTO pets\b/i.test(queryText(span)),
          ),
        )
      } finally {
        await server.stop()
        await receiver.close()
      }
    },
  )

  it(
    "a storage defect answered 500 is an error on the server span, its cause an exception event",
    processTimeout,
    async () => {
      const current = await store()
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer(current.storage, receiver)
      try {
        assert.equal((await server.api("/pets")).status, 200)
        // The column every read selects is gone: no retry cures that.
        await current.run("ALTER TABLE pets RENAME COLUMN name TO pet_name")
        const caller = newCaller()
        const response = await server.api("/pets", {
          headers: { traceparent: caller.traceparent, "X-Request-Id": "defect" },
        })
        assert.equal(response.status, 500)
        const spans = await waitForTrace(receiver, caller.traceId, 3)
        const span = serverSpanOf(spans, caller.traceId)
        assert.ok(span !== undefined)
        assert.equal(span.status.code, "ERROR")
        assert.equal(numberAttribute(span, "http.response.status_code"), 500)
        const exception = span.events.find((event) => event.name === "exception")
        assert.ok(exception !== undefined, JSON.stringify(span.events.map((event) => event.name)))
        const message = String(exception.attributes["exception.message"])
        assert.match(message, /pet_name|name/)
        // The same cause the error line carries, and that line names the trace.
        const errorLine = server
          .stderr()
          .split("\n")
          .filter((text) => text.startsWith("{"))
          .map(parseLogLine)
          .find((line) => line["requestId"] === "defect" && line["level"] === "error")
        assert.ok(errorLine !== undefined, server.stderr())
        // The line's error is the same failure: its type and message, which the event extends
        // with the driver's cause.
        const [logged = ""] = String(errorLine["error"]).split("\n")
        const type = String(exception.attributes["exception.type"])
        assert.ok(logged.startsWith(`${type}: `), logged)
        assert.ok(message.startsWith(logged.slice(type.length + 2)), `${logged} / ${message}`)
        assert.equal(errorLine["trace_id"], caller.traceId)
        assert.equal((await accessLine(server, "defect"))["trace_id"], caller.traceId)
      } finally {
        await server.stop()
        await receiver.close()
      }
    },
  )
}

let files = 0
describe("tracing on an SQLite file", () => {
  storageTraces(async () => sqliteStore(`traced-${++files}`))
})

await withTemporaryPostgresDatabase("tracing on PostgreSQL", (database) => {
  storageTraces(async () => postgresStore((await database.createAnother()).url))

  it(
    "a PostgreSQL outage answered 503 is an error on the server span too",
    processTimeout,
    async () => {
      const outage = await database.createAnother()
      const receiver = await startOtlpReceiver()
      const server = await startTracedServer(outage.url, receiver)
      try {
        await outage.refuseConnections()
        const caller = newCaller()
        const response = await server.api(
          "/pets",
          createPetRequest("Rex", { traceparent: caller.traceparent }),
        )
        assert.equal(response.status, 503)
        const spans = await waitForTrace(receiver, caller.traceId, 2)
        const span = serverSpanOf(spans, caller.traceId)
        assert.equal(span?.status.code, "ERROR")
        assert.ok(span?.events.some((event) => event.name === "exception"))
      } finally {
        await outage.allowConnections()
        await server.stop()
        await receiver.close()
      }
    },
  )
})
