import { after, before, describe, it } from "node:test"
import { MemoryPetRepository } from "@petstore/storage"
import {
  assertHealthy,
  finishedRequestsProperty,
  parameters,
  seed,
  shortLimits,
  unfinishedRequestsProperty,
} from "@petstore/test-support/fuzz-properties"
import fc from "fast-check"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

/**
 * The fuzz suite on the app as tests build it, in memory: malformed requests over raw sockets
 * (`@petstore/test-support/fuzz-properties`). The app on SQLite and the real process are fuzzed in
 * `apps/server/test/fuzz.test.ts`.
 *
 * Replay a failure with the seed it prints: `PETSTORE_FUZZ_SEED=<seed> node --import tsx --test
 * test/node/fuzz.test.ts`.
 */

describe(`fuzzing with malformed requests (seed ${seed})`, () => {
  describe("the app as tests build it, in memory", () => {
    let server: TestServer
    before(async () => {
      server = await startServer({
        layer: MemoryPetRepository.layer,
        connectionLimits: shortLimits,
      })
    })
    after(() => server.close())

    it("answers every finished request acceptably and in time", async () => {
      await fc.assert(finishedRequestsProperty(server.origin, apiKey), parameters(1_000))
      await assertHealthy(server.origin, apiKey)
    })

    it("answers or closes every unfinished request within the request timeout", async () => {
      await fc.assert(unfinishedRequestsProperty(server.origin, apiKey), parameters(12))
      await assertHealthy(server.origin, apiKey)
    })
  })
})
