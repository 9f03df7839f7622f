import assert from "node:assert/strict"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, describe, it } from "node:test"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  NewPet,
  petFingerprint,
} from "@petstore/core"
import { type RecordedSpan, recordingTracer } from "@petstore/core/testing"
import { Array, Effect, Option, type Tracer } from "effect"
import { SqlitePetRepository } from "../src/index.js"

const directory = mkdtempSync(path.join(tmpdir(), "petstore-sqlite-tracing-"))
after(() => rmSync(directory, { recursive: true, force: true }))

/** Whether `ancestor` is `span`'s parent, or its parent's, and so on. */
const isUnder = (span: Tracer.AnySpan, ancestor: Tracer.AnySpan): boolean =>
  span._tag === "Span" &&
  Option.match(span.parent, {
    onNone: () => false,
    onSome: (parent) => parent === ancestor || isUnder(parent, ancestor),
  })

const newPet = (name: string) => NewPet.make({ name, categoryId: CategoryId.make(1) })

const queryText = (span: RecordedSpan) => String(span.attributes.get("db.query.text") ?? "")

describe("SQLite file, traced", () => {
  it("runs each batch's SQL statements under its group-commit span", async () => {
    const { spans, tracer } = recordingTracer()
    const pet = newPet("Biscuit")
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const repository = yield* SqlitePetRepository.make({
            filename: path.join(directory, "traced.db"),
          })
          yield* Effect.forEach(
            Array.range(1, 4),
            (i) => Effect.withSpan(repository.create(newPet(`pet ${i}`)), `create-${i}`),
            { concurrency: "unbounded" },
          )
          yield* Effect.withSpan(
            repository.createOnce(pet, {
              scope: IdempotencyScope.make("principal"),
              key: IdempotencyKey.make("key-1"),
              fingerprint: petFingerprint(pet),
            }),
            "create-alone",
          )
        }),
      ).pipe(Effect.withTracer(tracer)),
    )

    const batches = spans.filter((span) => span.name === "group-commit.batch")
    assert.deepEqual(
      batches.map((batch) => batch.attributes.get("petstore.batch.size")),
      [4, 1],
      "the four concurrent creates share one batch",
    )
    const [shared, alone] = batches as [RecordedSpan, RecordedSpan]
    const creates = Array.range(1, 4).map((i) => spans.find((span) => span.name === `create-${i}`)!)
    assert.ok(Option.isSome(shared.parent) && creates.includes(shared.parent.value as RecordedSpan))
    assert.equal(shared.links.length, 3)

    const aloneCreate = spans.find((span) => span.name === "create-alone")!
    assert.deepEqual(alone.parent, Option.some(aloneCreate))

    // Every statement that writes pets or keys ran under a batch span. The batch with a key
    // runs in a transaction; the one without is a single INSERT, a transaction of its own.
    const statements = spans.filter((span) => span.name === "sql.execute")
    const writes = statements.filter((span) =>
      /^\s*(INSERT INTO pets|INSERT INTO idempotency_keys|SELECT k\.scope)/.test(queryText(span)),
    )
    const transactionsUnder = (batch: RecordedSpan) =>
      spans.filter(
        (span) => span.name === "sql.transaction" && Option.getOrNull(span.parent) === batch,
      ).length
    assert.equal(transactionsUnder(alone), 1, "the batch with a key runs in one transaction")
    assert.equal(transactionsUnder(shared), 0, "the batch without keys is one statement")
    assert.deepEqual(
      statements
        .filter((span) => isUnder(span, shared))
        .map((span) => queryText(span).trim().split(/\s+/).slice(0, 3).join(" ")),
      ["INSERT INTO pets"],
    )
    for (const batch of batches) {
      const under = writes.filter((span) => isUnder(span, batch))
      assert.ok(
        under.some((span) => queryText(span).startsWith("INSERT INTO pets")),
        `batch ${batch.spanId} has no INSERT INTO pets under it`,
      )
    }
    // The lone create's trace holds its own SQL: the key lookup, the insert and the key.
    assert.deepEqual(
      writes
        .filter((span) => isUnder(span, alone))
        .map((span) => queryText(span).trim().split(/\s+/).slice(0, 3).join(" ")),
      ["SELECT k.scope, k.idempotency_key", "INSERT INTO pets", "INSERT INTO idempotency_keys"],
    )
    assert.ok(writes.every((span) => isUnder(span, shared) || isUnder(span, alone)))
    // Statements carry placeholders, not the values a client sent.
    for (const span of statements) assert.ok(!queryText(span).includes("Biscuit"))
  })
})
