import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { parseLogLine } from "@petstore/test-support/log-capture"
import { exchange } from "@petstore/test-support/raw-exchange"
import { processTestTimeout, startServerProcess } from "./server-process.js"

/** What JSON leaves raw of the characters a terminal obeys: DEL, C1, bidirectional formatting. */
const rawInJson = /[\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u

/**
 * A request through a trusted proxy whose `X-Forwarded-For` entry is no address: the access line
 * names it as `claim:…`. Header bytes 0x80 to 0xFF reach the app as U+0080 to U+00FF, so C1
 * controls (0x9B is CSI, 0x85 NEL) and the bytes of U+202E in UTF-8 (E2 80 AE) arrive as they are.
 */
const claiming = (requestId: string, entry: Buffer) =>
  Buffer.concat([
    Buffer.from(`GET /v1/pets HTTP/1.1\r\nHost: localhost\r\nX-Request-Id: ${requestId}\r\n`),
    Buffer.from("X-Forwarded-For: "),
    entry,
    Buffer.from("\r\nConnection: close\r\n\r\n"),
  ])

describe("the server process's log", () => {
  it(
    "writes a C1 control a client sent (an X-Forwarded-For claim) as a JSON escape, never raw",
    { timeout: processTestTimeout },
    async () => {
      const server = await startServerProcess({
        storage: "memory",
        env: { PETSTORE_TRUST_PROXY: "loopback" },
      })
      const entries = {
        c1: Buffer.from([0x61, 0x9b, 0x33, 0x31, 0x6d, 0x85, 0x62]),
        "utf8-bidi": Buffer.from("a\u202eb"),
      }
      try {
        for (const [requestId, entry] of Object.entries(entries)) {
          const outcome = await exchange(server.origin, claiming(requestId, entry), {
            head: false,
            timeoutMs: 5_000,
          })
          assert.equal(outcome.kind === "answered" && outcome.response.status, 401)
        }
      } finally {
        await server.stop()
      }
      const written = server.stdout().split("\n")
      for (const line of written) assert.doesNotMatch(line, rawInJson)
      const addresses = written
        .filter((line) => line !== "")
        .map(parseLogLine)
        .filter((line) => line["message"] === "request")
        .map((line) => [line["requestId"], line["address"]])
      assert.deepEqual(addresses, [
        ["c1", "claim:a\u009b31m\u0085b"],
        ["utf8-bidi", "claim:a\u00e2\u0080\u00aeb"],
      ])
      assert.ok(server.stdout().includes(String.raw`"claim:a\u009b31m\u0085b"`), server.stdout())
    },
  )
})
