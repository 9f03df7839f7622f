import assert from "node:assert/strict"
import { openRaw, type RawConnection } from "./raw-connection.js"
import { exchange, type RawOutcome } from "./raw-exchange.js"

export const healthz = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

/** A connection from `from` that has been answered once and is kept open (keep-alive). */
export const holdConnection = async (origin: string, from: string): Promise<RawConnection> => {
  const connection = await openRaw(origin, { from })
  connection.socket.write(healthz)
  assert.equal((await connection.answer()).status, 200)
  return connection
}

export const tryHealthz = (origin: string, from: string): Promise<RawOutcome> =>
  exchange(origin, `${healthz.slice(0, -2)}Connection: close\r\n\r\n`, {
    head: false,
    timeoutMs: 2_000,
    from,
  })

export const assertRefusedAtAccept = (outcome: RawOutcome) => {
  assert.equal(outcome.kind, "closed", JSON.stringify(outcome))
  assert.equal(outcome.kind === "closed" ? outcome.received : undefined, "")
}

export const assertServed = (outcome: RawOutcome) => {
  assert.equal(outcome.kind, "answered", JSON.stringify(outcome))
  assert.equal(outcome.kind === "answered" ? outcome.response.status : undefined, 200)
}
