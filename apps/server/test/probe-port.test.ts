import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { Either, Option } from "effect"
import { assertError } from "@petstore/test-support/error-body"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { readConfig } from "../src/settings/read-config.js"
import { processTestTimeout, startServerProcess } from "./server-process.js"

describe("PETSTORE_PROBE_PORT", () => {
  const read = (env: Readonly<Record<string, string>>) =>
    Either.map(readConfig(env), (config) => config.probePort)

  it("is a port, unset by default", () => {
    assert.deepEqual(read({}), Either.right(Option.none()))
    assert.deepEqual(read({ PETSTORE_PROBE_PORT: "8081" }), Either.right(Option.some(8081)))
    const invalid = read({ PETSTORE_PROBE_PORT: "probes" })
    assert.ok(Either.isLeft(invalid))
    assert.match(invalid.left.join("\n"), /PETSTORE_PROBE_PORT must be an integer from 0/)
  })

  it(
    "serves /healthz and /readyz on a port of their own too, ready until SIGTERM, then 503 shutting_down through the drain",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({
        storage: "memory",
        env: { PETSTORE_PROBE_PORT: "0", PETSTORE_SHUTDOWN_DRAIN: "3s" },
      })
      let exited: Promise<unknown> | undefined
      try {
        const started = server
          .stdout()
          .split("\n")
          .find((line) => line.includes("petstore listening"))
        const probes = parseLogLine(started ?? "{}")["probes"]
        assert.ok(typeof probes === "string", started)
        assert.notEqual(probes, server.origin)

        const alive = await fetch(`${probes}/healthz`)
        assert.deepEqual([alive.status, await alive.json()], [200, { status: "ok" }])
        const ready = await fetch(`${probes}/readyz`)
        assert.deepEqual([ready.status, await ready.json()], [200, { status: "ready" }])
        assert.equal((await fetch(`${server.origin}/healthz`)).status, 200)
        await assertError(await fetch(`${probes}/v1/pets`), 404, "not_found")

        exited = server.stop()
        let answer = await fetch(`${probes}/readyz`)
        for (let tries = 0; answer.status === 200 && tries < 50; tries++) {
          await answer.arrayBuffer()
          await sleep(20)
          answer = await fetch(`${probes}/readyz`)
        }
        await assertError(answer, 503, "shutting_down")
        // Still alive, and the API still serving, through the drain.
        assert.equal((await fetch(`${probes}/healthz`)).status, 200)
        assert.equal((await server.request("/healthz")).status, 200)
      } finally {
        assert.deepEqual(await (exited ?? server.stop()), { code: 0, signal: null })
      }
    },
  )
})
