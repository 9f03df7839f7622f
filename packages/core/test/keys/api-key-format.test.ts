import assert from "node:assert/strict"
import { createHash } from "node:crypto"
import { describe, it } from "node:test"
import {
  generateApiKey,
  generateKeyId,
  hashApiKey,
  isWellFormedApiKey,
} from "../../src/keys/api-key-format.js"

/** RFC 6750 §2.1 b64token: what a bearer token may be. */
const bearerTokenPattern = /^[A-Za-z0-9\-._~+/]+=*$/

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

describe("the API key format", () => {
  it("is pst_, 43 base62 characters of randomness and a 6-character checksum: a bearer token", () => {
    const keys = Array.from({ length: 200 }, generateApiKey)
    for (const key of keys) {
      assert.match(key, /^pst_[0-9A-Za-z]{49}$/)
      assert.match(key, bearerTokenPattern)
      assert.ok(isWellFormedApiKey(key), key)
    }
    assert.equal(new Set(keys).size, keys.length)
  })

  it("refuses every key with one character changed, dropped or added, by its checksum", () => {
    const key = generateApiKey()
    for (let index = 4; index < key.length; index += 1) {
      const original = key.charAt(index)
      const replacement = base62.charAt((base62.indexOf(original) + 1 + index) % 62)
      const typo = `${key.slice(0, index)}${replacement}${key.slice(index + 1)}`
      assert.equal(isWellFormedApiKey(typo), false, typo)
      assert.equal(isWellFormedApiKey(key.slice(0, index) + key.slice(index + 1)), false)
      assert.equal(isWellFormedApiKey(`${key.slice(0, index)}a${key.slice(index)}`), false)
    }
    const swapped = `${key.slice(0, 10)}${key.charAt(11)}${key.charAt(10)}${key.slice(12)}`
    if (swapped !== key) assert.equal(isWellFormedApiKey(swapped), false)
  })

  it("refuses other prefixes and shapes", () => {
    const key = generateApiKey()
    for (const token of [
      key.replace("pst_", "pst-"),
      key.replace("pst_", "PST_"),
      key.slice(4),
      `${key}=`,
      "",
    ]) {
      assert.equal(isWellFormedApiKey(token), false, token)
    }
  })

  it("hashes a key with SHA-256, as 64 hex digits", () => {
    const key = generateApiKey()
    assert.equal(hashApiKey(key), createHash("sha256").update(key).digest("hex"))
    assert.match(hashApiKey(key), /^[0-9a-f]{64}$/)
  })

  it("gives keys ids that say nothing of the key", () => {
    assert.match(generateKeyId(), /^key_[0-9a-f]{16}$/)
    assert.notEqual(generateKeyId(), generateKeyId())
  })
})
