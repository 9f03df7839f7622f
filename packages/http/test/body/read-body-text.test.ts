import assert from "node:assert/strict"
import { createServer, type Server } from "node:http"
import { connect } from "node:net"
import { after, before, describe, it } from "node:test"
import { Either } from "effect"
import { readBodyText } from "../../src/body/read-body-text.js"

type Outcome = Either.Either<string, string>

/** A server that reads each body with a 64-byte limit and hands the outcome to the test. */
const outcomes: Array<(outcome: Outcome) => void> = []
const nextOutcome = () => new Promise<Outcome>((resolve) => outcomes.push(resolve))

let server: Server
let port = 0

before(async () => {
  server = createServer(async (request, response) => {
    const declared = request.headers["content-length"]
    const outcome = await readBodyText(
      request,
      64,
      declared === undefined ? undefined : Number(declared),
    )
    outcomes.shift()?.(outcome)
    response.end(Either.isRight(outcome) ? "read" : outcome.left)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  port = typeof address === "object" && address !== null ? address.port : 0
})

after(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** Sends the head, then each piece of the body in its own write, a few milliseconds apart. */
const send = async (head: string, pieces: ReadonlyArray<Buffer>, hangUp = false) => {
  const socket = connect(port, "127.0.0.1")
  socket.on("error", () => {})
  await new Promise((resolve) => socket.once("connect", resolve))
  socket.write(head)
  for (const piece of pieces) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    socket.write(piece)
  }
  if (hangUp) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    socket.destroy()
  } else {
    socket.end()
  }
}

const lengthHead = (length: number) =>
  `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`
const chunkedHead =
  "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
const chunk = (bytes: Buffer) =>
  Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")])

describe("readBodyText", () => {
  it("joins a body sent in pieces, a character split between two of them included", async () => {
    const bytes = Buffer.from('{"name":"🐕 Rex"}')
    const split = bytes.indexOf(Buffer.from("🐕")) + 2
    const outcome = nextOutcome()
    await send(lengthHead(bytes.length), [bytes.subarray(0, split), bytes.subarray(split)])
    assert.deepEqual(await outcome, Either.right('{"name":"🐕 Rex"}'))
  })

  it("drops a leading byte-order mark, as raw-body's UTF-8 decoder did", async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')])
    const outcome = nextOutcome()
    await send(lengthHead(bytes.length), [bytes])
    assert.deepEqual(await outcome, Either.right('{"a":1}'))
  })

  it("stops at the limit when a chunked body goes past it", async () => {
    const outcome = nextOutcome()
    await send(chunkedHead, [chunk(Buffer.alloc(40, 0x61)), chunk(Buffer.alloc(40, 0x61))])
    assert.deepEqual(await outcome, Either.left("too_large"))
  })

  it("takes a body of exactly the limit", async () => {
    const outcome = nextOutcome()
    await send(chunkedHead, [chunk(Buffer.alloc(64, 0x61)), Buffer.from("0\r\n\r\n")])
    assert.deepEqual(await outcome, Either.right("a".repeat(64)))
  })

  it("says the body was cut off when the client hangs up before sending all of it", async () => {
    const outcome = nextOutcome()
    await send(lengthHead(50), [Buffer.from('{"name":')], true)
    assert.deepEqual(await outcome, Either.left("cut_off"))
  })

  it("refuses bytes that are not UTF-8 instead of replacing them with U+FFFD", async () => {
    const notUtf8: ReadonlyArray<[string, ReadonlyArray<Buffer>]> = [
      ["a stray 0xFF", [Buffer.from("61ff62", "hex")]],
      ["a stray 0xFE", [Buffer.from("61fe62", "hex")]],
      ["an overlong /", [Buffer.from("61c0af62", "hex")]],
      ["a surrogate encoded as UTF-8", [Buffer.from("61eda08062", "hex")]],
      ["a sequence cut short at the end", [Buffer.from("61e282", "hex")]],
      ["0xFF in a piece of its own", [Buffer.from("61", "hex"), Buffer.from("ff", "hex")]],
      [
        "a lead byte and a bad follower in two pieces",
        [Buffer.from("61e2", "hex"), Buffer.from("2862", "hex")],
      ],
      [
        "an overlong form split between pieces",
        [Buffer.from("61c0", "hex"), Buffer.from("af62", "hex")],
      ],
    ]
    for (const [what, pieces] of notUtf8) {
      const outcome = nextOutcome()
      await send(lengthHead(pieces.reduce((sum, piece) => sum + piece.length, 0)), pieces)
      assert.deepEqual(await outcome, Either.left("not_utf8"), what)
    }
  })
})
