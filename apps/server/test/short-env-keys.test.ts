import assert from "node:assert/strict"
import { it } from "node:test"
import { processTestTimeout, startServerProcess } from "./server-process.js"

it(
  "warns at start of each PETSTORE_API_KEYS key short enough to guess, naming it by position only",
  { timeout: processTestTimeout },
  async () => {
    const short = "my-secret-key"
    const long = "a-development-key-of-forty-characters-xx"
    const server = await startServerProcess({ storage: "memory", apiKeys: [long, short] })
    try {
      const warnings = server
        .stderr()
        .split("\n")
        .filter((line) => line.includes("short enough to guess"))
      assert.equal(warnings.length, 1, server.stderr())
      assert.match(warnings[0] ?? "", /"keyId":"env:2"/)
      assert.ok(!`${server.stdout()}${server.stderr()}`.includes(short), "the key was logged")
      assert.equal((await server.api("/pets")).status, 200, "a long key is served")
    } finally {
      await server.stop()
    }
  },
)
