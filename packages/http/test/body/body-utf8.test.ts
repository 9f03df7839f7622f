import assert from "node:assert/strict"
import { request } from "node:http"
import { after, before, describe, it } from "node:test"
import { Schema } from "effect"
import { answerOf, type Answer } from "@petstore/test-support/requests"
import { apiKey, PetBody, startServer, type TestServer } from "../harness/server.js"

/**
 * POSTs a create whose body is these bytes exactly, each piece in its own write a few
 * milliseconds apart (chunked when there are several), as fetch cannot send bytes that are not
 * UTF-8 in pieces of our choosing.
 */
const postBytes = (
  server: TestServer,
  pieces: ReadonlyArray<Buffer>,
  headers: Readonly<Record<string, string>> = {},
): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const sent = request(
      `${server.origin}${server.basePath}/pets`,
      {
        method: "POST",
        headers: {
          Authorization: `Bearer ${apiKey}`,
          "Content-Type": "application/json",
          ...(pieces.length === 1 ? { "Content-Length": String(pieces[0]?.length ?? 0) } : {}),
          ...headers,
        },
      },
      (response) => resolve(answerOf(response)),
    )
    sent.on("error", reject)
    void (async () => {
      for (const piece of pieces) {
        sent.write(piece)
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      sent.end()
    })()
  })

/** `{"name":"<name>","categoryId":1}` with the name's bytes as given. */
const bodyNamed = (nameHex: string) =>
  Buffer.concat([
    Buffer.from('{"name":"'),
    Buffer.from(nameHex, "hex"),
    Buffer.from('","categoryId":1}'),
  ])

const petNamed = (answer: Answer): string =>
  Schema.decodeUnknownSync(PetBody)(JSON.parse(answer.body)).name

const notUtf8 = JSON.stringify({
  code: "invalid_json",
  message: "the body is not valid UTF-8; send JSON encoded as UTF-8",
  status: 400,
})

describe("a body that is not UTF-8", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("is refused with 400 invalid_json, never stored with U+FFFD in its place", async () => {
    const names: ReadonlyArray<[string, string]> = [
      ["a\\xffb", "61ff62"],
      ["a\\xfeb", "61fe62"],
      ["an overlong / (C0 AF)", "61c0af62"],
      ["an overlong / in three bytes (E0 80 AF)", "61e080af62"],
      ["a lone surrogate encoded as UTF-8 (ED A0 80)", "61eda08062"],
      ["a code point past U+10FFFF (F4 90 80 80)", "61f490808062"],
      ["a sequence cut short by the closing quote", "61e282"],
    ]
    for (const [what, hex] of names) {
      const answer = await postBytes(server, [bodyNamed(hex)])
      assert.equal(answer.status, 400, what)
      assert.equal(answer.body, notUtf8, what)
    }
  })

  it("is refused when the bad bytes come in separate chunks", async () => {
    const body = bodyNamed("61e22862")
    const at = body.indexOf(0xe2) + 1
    const split = await postBytes(server, [body.subarray(0, at), body.subarray(at)])
    assert.equal(split.status, 400)
    assert.equal(split.body, notUtf8)
    const overlong = bodyNamed("61c0af62")
    const lead = overlong.indexOf(0xc0) + 1
    const answer = await postBytes(server, [overlong.subarray(0, lead), overlong.subarray(lead)])
    assert.equal(answer.body, notUtf8)
  })

  it("while a name's characters split between chunks are read whole", async () => {
    const body = Buffer.from('{"name":"🐕 Rex é","categoryId":1}')
    const dog = body.indexOf(Buffer.from("🐕"))
    const accent = body.indexOf(Buffer.from("é"))
    const answer = await postBytes(server, [
      body.subarray(0, dog + 1),
      body.subarray(dog + 1, dog + 3),
      body.subarray(dog + 3, accent + 1),
      body.subarray(accent + 1),
    ])
    assert.equal(answer.status, 201, answer.body)
    assert.equal(petNamed(answer), "🐕 Rex é")
  })

  it("after a byte-order mark is still UTF-8, the mark dropped", async () => {
    const answer = await postBytes(server, [
      Buffer.concat([Buffer.from("efbbbf", "hex"), Buffer.from('{"name":"Bom","categoryId":1}')]),
    ])
    assert.equal(answer.status, 201, answer.body)
    assert.equal(petNamed(answer), "Bom")
  })

  it("a\\xffb and a\\xfeb under one Idempotency-Key do not replay each other", async () => {
    const key = `utf8-${process.pid}-${Date.now()}`
    for (const hex of ["61ff62", "61fe62"]) {
      const answer = await postBytes(server, [bodyNamed(hex)], { "Idempotency-Key": key })
      assert.equal(answer.status, 400)
      assert.equal(answer.headers["idempotent-replayed"], undefined)
      assert.equal(answer.body, notUtf8)
    }
    // Nothing was stored under the key: a valid body with it is a first create.
    const valid = await postBytes(server, [bodyNamed("61")], { "Idempotency-Key": key })
    assert.equal(valid.status, 201)
    assert.equal(valid.headers["idempotent-replayed"], undefined)
  })
})
