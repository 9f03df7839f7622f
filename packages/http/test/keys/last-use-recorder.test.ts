import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { lastUseRecorder } from "../../src/keys/last-use-recorder.js"

const minute = 60_000

describe("the last-use recorder", () => {
  it("notes a key's use at most once a minute", () => {
    const recorder = lastUseRecorder(minute)
    for (let at = 0; at < minute; at += 1_000) recorder.note("key_a", at)
    recorder.note("key_b", 5_000)
    assert.deepEqual(recorder.take(minute - 1), [
      { id: "key_a", at: 0 },
      { id: "key_b", at: 5_000 },
    ])
    recorder.note("key_a", minute - 1)
    assert.deepEqual(recorder.take(minute), [])
    recorder.note("key_a", minute)
    recorder.note("key_a", minute + 1)
    assert.deepEqual(recorder.take(minute + 2), [{ id: "key_a", at: minute }])
  })

  it("notes a use afresh when writing it failed", () => {
    const recorder = lastUseRecorder(minute)
    recorder.note("key_a", 0)
    const uses = recorder.take(1)
    recorder.unwritten(uses)
    recorder.note("key_a", 2)
    assert.deepEqual(recorder.take(3), [{ id: "key_a", at: 2 }])
  })

  it("forgets keys unused for a minute, so memory stays bounded by the keys in use", () => {
    const recorder = lastUseRecorder(minute)
    for (let index = 0; index < 1_000; index += 1) recorder.note(`key_${index}`, 0)
    assert.equal(recorder.take(0).length, 1_000)
    assert.equal(recorder.trackedKeys(), 1_000)
    recorder.note("key_0", minute)
    recorder.take(minute)
    assert.equal(recorder.trackedKeys(), 1)
  })
})
