import assert from "node:assert/strict"
import { Writable } from "node:stream"
import { describe, it } from "node:test"
import { setTimeout as sleep } from "node:timers/promises"
import { lineDestination } from "../src/logs/log-destination.js"

const line = (index: number) => `${JSON.stringify({ index, padding: "x".repeat(80) })}\n`

/** A reader that keeps up: each write is done at once, or after `delayMs`. */
const keepingUp = (received: Array<string>, delayMs = 0) =>
  new Writable({
    decodeStrings: false,
    write: (chunk: string, _encoding, done) => {
      received.push(chunk)
      if (delayMs === 0) done()
      else setTimeout(done, delayMs)
    },
  })

/** A reader that stopped reading: no write ever completes. */
const stalled = () => new Writable({ write: () => {} })

/** A reader that is gone: every write fails as a closed pipe does. */
const gone = (attempts: { count: number }) =>
  new Writable({
    write: (_chunk, _encoding, done) => {
      attempts.count += 1
      done(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }))
    },
  })

describe("lineDestination", () => {
  it("passes every line on, in order, while the reader keeps up", () => {
    const received: Array<string> = []
    let drops = 0
    const destination = lineDestination(keepingUp(received), {
      maxWaitingBytes: 1_000,
      onDrop: () => (drops += 1),
    })
    for (let index = 0; index < 200; index += 1) destination.write(line(index))
    assert.equal(drops, 0)
    assert.deepEqual(
      received,
      Array.from({ length: 200 }, (_, index) => line(index)),
    )
  })

  it("holds at most maxWaitingBytes (and one line) for a reader that stalls, dropping and counting the rest", () => {
    const stream = stalled()
    let drops = 0
    const destination = lineDestination(stream, {
      maxWaitingBytes: 1_000,
      onDrop: () => (drops += 1),
    })
    const size = Buffer.byteLength(line(0))
    for (let index = 0; index < 100; index += 1) destination.write(line(index))
    assert.ok(stream.writableLength < 1_000 + size, `${stream.writableLength} bytes wait`)
    const kept = Math.ceil(1_000 / size)
    assert.equal(drops, 100 - kept)
  })

  it("drops every line once the stream failed (EPIPE), never retrying nor throwing", async () => {
    const attempts = { count: 0 }
    let drops = 0
    const destination = lineDestination(gone(attempts), {
      maxWaitingBytes: 1_000,
      onDrop: () => (drops += 1),
    })
    destination.write(line(0))
    // The error is emitted on a later tick; without a listener it would end the process.
    await sleep(10)
    for (let index = 1; index <= 50; index += 1) destination.write(line(index))
    assert.equal(attempts.count, 1)
    assert.equal(drops, 50)
    const started = performance.now()
    await destination.flush(1_000)
    assert.ok(performance.now() - started < 100, "flush waited on a failed stream")
  })

  it(
    "flush waits for the lines to leave, and for `ms` at most when they cannot",
    { timeout: 5_000 },
    async () => {
      const received: Array<string> = []
      const reader = keepingUp(received, 2)
      const healthy = lineDestination(reader, { maxWaitingBytes: 100_000, onDrop: () => {} })
      for (let index = 0; index < 50; index += 1) healthy.write(line(index))
      assert.ok(reader.writableLength > 0)
      await healthy.flush(5_000)
      assert.equal(reader.writableLength, 0)
      assert.equal(received.length, 50)

      const stuck = lineDestination(stalled(), { maxWaitingBytes: 100_000, onDrop: () => {} })
      stuck.write(line(0))
      const started = performance.now()
      await stuck.flush(200)
      const waited = performance.now() - started
      assert.ok(waited >= 190 && waited < 1_000, `waited ${waited} ms`)
    },
  )
})
