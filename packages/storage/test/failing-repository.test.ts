import assert from "node:assert/strict"
import { describe, it } from "node:test"
import {
  CategoryId,
  IdempotencyKey,
  IdempotencyScope,
  Limit,
  NewPet,
  PetId,
  PetRepository,
  StorageUnavailable,
} from "@petstore/core"
import { Cause, Effect, Option } from "effect"
import { failingRepository } from "../src/testing/index.js"

const rex = NewPet.make({ name: "Rex", categoryId: CategoryId.make(1) })

/** The cause each method ended with. */
const everyMethod = Effect.flatMap(PetRepository, (repository) =>
  Effect.all([
    Effect.cause(repository.create(rex)),
    Effect.cause(
      repository.createOnce(rex, {
        scope: IdempotencyScope.make("principal"),
        key: IdempotencyKey.make("k-1"),
        fingerprint: "fingerprint",
      }),
    ),
    Effect.cause(repository.findById(PetId.make(1))),
    Effect.cause(
      repository.list({ status: Option.none(), afterId: Option.none(), limit: Limit.make(5) }),
    ),
  ]),
)

describe("failingRepository", () => {
  it("fails every method with the StorageUnavailable given", async () => {
    const unavailable = new StorageUnavailable({ cause: new Error("disk unplugged") })
    const causes = await Effect.runPromise(
      Effect.provide(everyMethod, failingRepository(Effect.fail(unavailable))),
    )
    for (const cause of causes) {
      assert.deepEqual(Cause.failureOption(cause), Option.some(unavailable))
    }
  })

  it("makes every method a defect when given one", async () => {
    const bug = new Error("constraint violated")
    const causes = await Effect.runPromise(
      Effect.provide(everyMethod, failingRepository(Effect.die(bug))),
    )
    for (const cause of causes) {
      assert.deepEqual(Cause.dieOption(cause), Option.some(bug))
    }
  })
})
