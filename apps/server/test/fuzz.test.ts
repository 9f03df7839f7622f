import assert from "node:assert/strict"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import path from "node:path"
import { after, before, describe, it } from "node:test"
import {
  answerWithinMs,
  assertHealthy,
  finishedRequestsProperty,
  parameters,
  seed,
  shortLimits,
} from "@petstore/test-support/fuzz-properties"
import {
  describeRequest,
  encodeRequest,
  malformedRequest,
} from "@petstore/test-support/malformed-requests"
import { exchange } from "@petstore/test-support/raw-exchange"
import { Schema } from "effect"
import fc from "fast-check"
import { apiKey, PetBody, startApp, type AppServer } from "./harness.js"
import { processApiKey, startServerProcess, type RunningServer } from "./server-process.js"

/**
 * The fuzz suite (`@petstore/test-support/fuzz-properties`): malformed requests over raw sockets,
 * at the app as tests build it on SQLite and at the real process (SQLite). Whatever arrives, the
 * server answers without a 5xx, in time, every error (Node's own replies included) as the Error
 * body whose `status` is the HTTP status, and it is healthy afterwards. The app in memory is
 * fuzzed in `packages/http/test/node/fuzz.test.ts`.
 *
 * Replay a failure with the seed it prints: `PETSTORE_FUZZ_SEED=<seed> node --import tsx --test
 * test/fuzz.test.ts`.
 */

/**
 * Bytes pipelined after a valid create, whatever they are, never change the create's answer:
 * a reply to them must not be read as the create's (a 400 for a pet that was created).
 */
const pipelinedAfterCreateProperty = (origin: string, key: string) =>
  fc.asyncProperty(
    fc.string({ minLength: 1, maxLength: 20 }),
    malformedRequest({ key, unfinished: true }),
    async (name, following) => {
      const body = JSON.stringify({ name, categoryId: 1 })
      const create = Buffer.from(
        `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      )
      const outcome = await exchange(origin, Buffer.concat([create, encodeRequest(following)]), {
        head: false,
        timeoutMs: answerWithinMs,
      })
      const context = `after ${describeRequest(following)}`
      assert.ok(outcome.kind === "answered", `${outcome.kind}: ${context}`)
      assert.equal(outcome.response.status, 201, `${outcome.response.body.toString()} ${context}`)
      const pet = Schema.decodeUnknownSync(PetBody)(JSON.parse(outcome.response.body.toString()))
      assert.equal(pet.name, name, context)
    },
  )

describe(`fuzzing with malformed requests (seed ${seed})`, () => {
  describe("the app as tests build it, on an SQLite file", () => {
    let directory: string
    let server: AppServer
    before(async () => {
      directory = await mkdtemp(path.join(tmpdir(), "petstore-fuzz-"))
      server = await startApp(
        { kind: "sqlite", filename: path.join(directory, "pets.db") },
        { connectionLimits: shortLimits },
      )
    })
    after(async () => {
      await server.close()
      await rm(directory, { recursive: true, force: true })
    })

    it("answers every finished request acceptably and in time", async () => {
      await fc.assert(finishedRequestsProperty(server.origin, apiKey), parameters(500))
      await assertHealthy(server.origin, apiKey)
    })

    it("answers a create with its own answer whatever is pipelined after it", async () => {
      await fc.assert(pipelinedAfterCreateProperty(server.origin, apiKey), parameters(200))
      await assertHealthy(server.origin, apiKey)
    })
  })

  describe("the server process, on an SQLite file", () => {
    let directory: string
    let server: RunningServer
    before(async () => {
      directory = await mkdtemp(path.join(tmpdir(), "petstore-fuzz-"))
      server = await startServerProcess({ storage: `file:${path.join(directory, "pets.db")}` })
    })
    after(async () => {
      await server.stop()
      await rm(directory, { recursive: true, force: true })
    })

    it("answers every finished request acceptably and in time, and keeps running", async () => {
      await fc.assert(finishedRequestsProperty(server.origin, processApiKey), parameters(800))
      await assertHealthy(server.origin, processApiKey)
      assert.equal(server.child.exitCode, null, "the process exited")
    })
  })
})
