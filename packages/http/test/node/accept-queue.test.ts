import assert from "node:assert/strict"
import { spawnSync } from "node:child_process"
import { once } from "node:events"
import { createServer, type AddressInfo } from "node:net"
import { describe, it } from "node:test"
import { acceptQueueLength } from "../../src/node/accept-queue.js"

/**
 * `acceptQueueLength` reads from Linux how many connections wait in a listener's accept queue:
 * those the kernel has completed and the process has not accepted yet.
 */

const onLinux = {
  skip: process.platform !== "linux" && "the accept queue is read from Linux's /proc/net/tcp",
}

/** Connects `count` times to the address and exits once every connection is established. */
const connectScript = `
const { connect } = require("node:net")
const [host, port, count] = process.argv.slice(1)
let connected = 0
for (let i = 0; i < Number(count); i++) {
  connect({ host, port: Number(port) }, () => { if (++connected === Number(count)) process.exit(0) })
}
`

const listening = async (host: string): Promise<AddressInfo> => {
  const server = createServer((socket) => socket.destroy())
  server.listen(0, host)
  await once(server, "listening")
  const address = server.address()
  assert.ok(address !== null && typeof address === "object")
  // The connections are accepted once this test lets the event loop run; the listener goes with
  // the test process.
  server.unref()
  return address
}

describe("acceptQueueLength", () => {
  for (const host of ["127.0.0.1", "::1"]) {
    it(`counts the connections waiting on a listener on ${host}`, onLinux, async () => {
      const address = await listening(host)
      assert.equal(acceptQueueLength(address), 0)
      // This process is held while another connects: nothing accepts the connections meanwhile.
      const connecting = spawnSync(process.execPath, [
        "-e",
        connectScript,
        host,
        String(address.port),
        "5",
      ])
      assert.equal(connecting.status, 0, connecting.stderr.toString())
      assert.equal(acceptQueueLength(address), 5)
    })
  }

  it("is undefined for an address nothing listens on", onLinux, () => {
    assert.equal(acceptQueueLength({ address: "127.0.0.1", family: "IPv4", port: 1 }), undefined)
  })
})
