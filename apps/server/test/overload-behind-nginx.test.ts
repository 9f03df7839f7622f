import assert from "node:assert/strict"
import { once } from "node:events"
import { createServer } from "node:net"
import { describe, it } from "node:test"
import { assertErrorAnswer, assertError } from "@petstore/test-support/error-body"
import {
  behindNginxSettings,
  maxConnsFor,
  nginxMissing,
  shippedNginx,
  startNginx,
} from "@petstore/test-support/nginx"
import { scrape } from "@petstore/test-support/prometheus-text"
import { freePort } from "@petstore/test-support/redis-server"
import { postJson } from "@petstore/test-support/requests"
import {
  assertHealthAnswered,
  countedBetween,
  heldServerSkip,
  overload,
  startHeldServer,
} from "./held-server.js"
import { processApiKey, processTestTimeout, startServerProcess } from "./server-process.js"

/**
 * Shedding at nginx, as the README's "Deploying behind nginx" sets it up: the shipped
 * configuration (deploy/nginx/petstore.conf) in front of an instance run as it says, its
 * `max_conns` what the instance serves in a quarter second. Under overload nginx refuses the
 * excess with the service's 503 before the instance sees it, and the instance refuses nothing.
 */

const portOf = (origin: string) => Number(new URL(origin).port)

/**
 * nginx on a free port, running the shipped configuration in front of `instancePorts`, with one
 * worker, as the README advises in front of instances on a small share of a core: its connections
 * to the instance are opened as the load begins (the generator's pool opens through it) and then
 * kept. With two, each opens more as the overload moves requests between them, and a request on
 * a connection opened to the loaded instance waits for it to be taken up: 6 to 14 requests of
 * about 5,000 went unanswered for 2 s in half the runs, against at most 0.5 s in 5 of 5 with one
 * (the README, "Shedding at nginx").
 */
const startShippedNginx = async (instancePorts: ReadonlyArray<number>, maxConns?: number) => {
  const port = await freePort()
  return startNginx(shippedNginx(instancePorts, port, maxConns), port, { workers: 1 })
}

/** nginx's own words in its refusal, which an instance's refusal does not have. */
const nginxRefusal = /load balancer/

describe("overload behind nginx", { skip: nginxMissing || heldServerSkip }, () => {
  it(
    "refuses the excess at nginx with the service's 503, so that the instance refuses nothing, keeps answering /healthz, and serves every request again once the load stops",
    { timeout: processTestTimeout },
    async (t) => {
      const held = await startHeldServer(behindNginxSettings)
      const { server, capacity, list } = held
      const maxConns = maxConnsFor(capacity)
      const nginx = await startShippedNginx([portOf(server.origin)], maxConns).catch(
        async (error: unknown) => {
          await held.stop()
          throw error
        },
      )
      try {
        const { rate, served, refusals, probes, before } = await overload(held, nginx.origin)
        t.diagnostic(
          `capacity ${Math.round(capacity)}/s measured, max_conns ${maxConns}, ${rate}/s: ${served} served, ${refusals.length} refused`,
        )
        assert.ok(served > 0)
        for (const refusal of refusals) {
          assert.match(assertErrorAnswer(refusal, 503, "overloaded"), nginxRefusal)
          assert.equal(refusal.headers["retry-after"], "1")
          assert.equal(refusal.headers["x-content-type-options"], "nosniff")
        }
        // What the instance saw: the served requests; it refused none itself.
        const counted = countedBetween(before, await scrape(server.origin))
        assert.equal(counted.listed, served)
        assert.equal(
          counted.refused,
          0,
          `the instance refused ${counted.refused} itself, nginx ${refusals.length} (max_conns ${maxConns})`,
        )
        // Asked directly, as an orchestrator's probe asks an instance, not through nginx.
        assertHealthAnswered(probes)

        for (let index = 0; index < 20; index += 1) assert.equal(await list(nginx.origin), 200)
      } finally {
        await nginx.stop()
        await held.stop()
      }
    },
  )
})

describe("nginx's own answers", { skip: nginxMissing }, () => {
  it(
    "are the service's Error body where no instance took the request: 503 overloaded when none is up, 413 over nginx's body limit in the words an instance uses",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({ storage: "memory", env: behindNginxSettings })
      const nginx = await startShippedNginx([portOf(server.origin)])
      try {
        const create = (bytes: number) =>
          fetch(`${nginx.origin}/v1/pets`, {
            ...postJson({ name: "x".repeat(bytes), categoryId: 1 }),
            headers: {
              Authorization: `Bearer ${processApiKey}`,
              "Content-Type": "application/json",
            },
          })
        const instanceSays = await assertError(
          await create(1.5 * 2 ** 20),
          413,
          "payload_too_large",
        )
        const tooLarge = await create(2.5 * 2 ** 20)
        assert.equal(tooLarge.headers.get("x-content-type-options"), "nosniff")
        assert.equal(await assertError(tooLarge, 413, "payload_too_large"), instanceSays)

        await server.stop()
        for (const method of ["GET", "POST"]) {
          const refused = await fetch(`${nginx.origin}/v1/pets`, {
            method,
            headers: { Authorization: `Bearer ${processApiKey}` },
          })
          assert.equal(refused.headers.get("retry-after"), "1")
          assert.match(await assertError(refused, 503, "overloaded"), nginxRefusal)
        }
      } finally {
        await nginx.stop()
        await server.stop()
      }
    },
  )

  it(
    "stays nginx's 502 once an instance took the request: a create may have been done",
    { timeout: processTestTimeout },
    async () => {
      // An "instance" that resets the connection once the request has come: nginx sent it.
      // (Reset before, the connection is no connection to nginx, and the answer rightly 503.)
      const resetting = createServer((socket) =>
        socket.once("data", () => socket.resetAndDestroy()),
      )
      resetting.listen(0, "127.0.0.1")
      await once(resetting, "listening")
      const address = resetting.address()
      assert.ok(address !== null && typeof address !== "string")
      const nginx = await startShippedNginx([address.port])
      try {
        const answer = await fetch(`${nginx.origin}/v1/pets`, {
          ...postJson({ name: "Rex", categoryId: 1 }),
        })
        assert.equal(answer.status, 502)
        assert.doesNotMatch(answer.headers.get("content-type") ?? "", /json/)
        await answer.arrayBuffer()
      } finally {
        await nginx.stop()
        resetting.close()
      }
    },
  )
})
