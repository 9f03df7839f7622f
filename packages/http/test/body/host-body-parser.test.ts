import assert from "node:assert/strict"
import type { IncomingMessage } from "node:http"
import { after, before, describe, it } from "node:test"
import type Koa from "koa"
import { maxBodyBytes, maxJsonDepth } from "../../src/index.js"
import {
  hostApp,
  mounted,
  mountPath,
  petstoreApp,
  post,
  serve,
  type Exchange,
  type HostOptions,
  type PetstoreApp,
  type Served,
} from "../harness/mount.js"

/** A NewPet whose `extra` member (ignored by the schema) makes the whole `depth` deep. */
const nested = (depth: number): string =>
  `{"name":"Rex","categoryId":1,"extra":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`

/** A NewPet of more than `bytes` bytes, padded in a member the schema ignores. */
const larger = (bytes: number): string =>
  JSON.stringify({ name: "Rex", categoryId: 1, pad: "x".repeat(bytes) })

const assertError = (answer: Exchange, status: number, code: string): void => {
  assert.equal(answer.status, status, answer.text)
  assert.match(answer.headers.get("content-type") ?? "", /^application\/json/)
  const body = answer.json()
  assert.ok(typeof body === "object" && body !== null, answer.text)
  assert.deepEqual(Object.keys(body).sort(), ["code", "message", "status"])
  assert.ok("code" in body && body.code === code, answer.text)
  assert.ok("status" in body && body.status === status, answer.text)
}

const readAll = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

/** A host and the app mounted in it, for the tests of one describe. */
const hosted = (options: HostOptions) => {
  let petstore: PetstoreApp
  let served: Served
  before(async () => {
    petstore = petstoreApp()
    served = await serve(hostApp(mounted(petstore.app), options).callback())
  })
  after(async () => {
    await served.close()
    await petstore.dispose()
  })
  return {
    create: (body: string, options?: Parameters<typeof post>[2]) =>
      post(`${served.origin}${mountPath}/v1/pets`, body, options),
  }
}

describe("under a host's @koa/bodyparser, app-wide", () => {
  const host = hosted({})

  it("creates from the body the host parsed: 201, promptly", async () => {
    const created = await host.create(JSON.stringify({ name: "Rex", categoryId: 1 }))
    assert.equal(created.status, 201, created.text)
    assert.deepEqual(created.json(), { id: 1, name: "Rex", categoryId: 1 })
  })

  it("refuses a body that is not JSON with 415, whether or not the host parsed it", async () => {
    // text/plain: the host's parser leaves it; a form: the host's parser reads it.
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded"]) {
      const refused = await host.create("name=Rex&categoryId=1", { contentType })
      assertError(refused, 415, "unsupported_media_type")
    }
    const latin1 = await host.create('{"name":"Rex","categoryId":1}', {
      contentType: "application/json; charset=latin1",
    })
    assertError(latin1, 415, "unsupported_media_type")
  })

  it(`refuses a body over ${maxBodyBytes} bytes with 413, by its length or, sent chunked, by its text`, async () => {
    // The host's own limit is 2 MiB: the app's is the one these meet.
    assertError(await host.create(larger(maxBodyBytes)), 413, "payload_too_large")
    assertError(
      await host.create(larger(maxBodyBytes), { chunked: true }),
      413,
      "payload_too_large",
    )
    const justUnder = larger(maxBodyBytes - 100)
    assert.ok(Buffer.byteLength(justUnder) <= maxBodyBytes)
    assert.equal((await host.create(justUnder, { chunked: true })).status, 201)
  })

  it(`refuses JSON nested more than ${maxJsonDepth} deep with 400, and takes ${maxJsonDepth}`, async () => {
    const refused = await host.create(nested(maxJsonDepth + 1))
    assertError(refused, 400, "invalid_json")
    assert.match(refused.text, /nests arrays and objects more than 32 deep/)
    assert.equal((await host.create(nested(maxJsonDepth))).status, 201)
  })

  it("refuses wrong types with 400 and the Error body", async () => {
    const refused = await host.create(JSON.stringify({ name: 5, categoryId: "one" }))
    assertError(refused, 400, "invalid_body")
    assertError(await host.create("{}"), 400, "invalid_body")
    assertError(await host.create("[]"), 400, "invalid_body")
  })

  it("refuses an integer field written with a fraction or an exponent, as the text shows it", async () => {
    // Each parses to an integer: only the text tells that the client did not send one.
    for (const literal of ["1.0", "1e0", "9007199254740990.6"]) {
      assertError(await host.create(`{"name":"Rex","categoryId":${literal}}`), 400, "invalid_body")
    }
  })

  it("reads the body itself when the host's parser left it (a +json type the host does not know)", async () => {
    const created = await host.create(JSON.stringify({ name: "Rex", categoryId: 3 }), {
      contentType: "application/merge-patch+json",
    })
    assert.equal(created.status, 201, created.text)
  })

  it("leaves what the host's parser refuses to the host: its own 400 and 413, before any key is checked", async () => {
    // What the README says of a parser in front: these answers are the host's, not the app's.
    const keyless = { headers: {} }
    const invalid = await host.create('{"name": "Rex",', keyless)
    assert.equal(invalid.status, 400)
    assert.match(invalid.headers.get("content-type") ?? "", /^text\/plain/)
    assert.equal(invalid.headers.get("x-request-id"), null)
    const overHostLimit = await host.create(larger(2 * 1024 * 1024), keyless)
    assert.equal(overHostLimit.status, 413)
    assert.match(overHostLimit.headers.get("content-type") ?? "", /^text\/plain/)
  })
})

describe("under a host that mounts the API before its body parser, as the README shows", () => {
  const host = hosted({ petstoreFirst: true })

  it("answers every body error with the Error body and X-Request-Id, after the key check", async () => {
    const invalid = await host.create('{"name": "Rex",')
    assertError(invalid, 400, "invalid_json")
    assert.match(invalid.headers.get("x-request-id") ?? "", /./)
    assertError(await host.create(larger(2 * 1024 * 1024)), 413, "payload_too_large")
    assertError(await host.create('{"name": "Rex",', { headers: {} }), 401, "unauthorized")
    const created = await host.create(JSON.stringify({ name: "Rex", categoryId: 1 }))
    assert.equal(created.status, 201, created.text)
  })
})

describe("under a host that parses the body and keeps only the value", () => {
  const valueOnly: Koa.Middleware = async (ctx, next) => {
    if (ctx.method === "POST") ctx.request.body = JSON.parse(await readAll(ctx.req))
    await next()
  }
  const host = hosted({ bodyMiddleware: valueOnly })

  it("creates from the value: 201", async () => {
    const created = await host.create(JSON.stringify({ name: "Rex", categoryId: 1 }))
    assert.equal(created.status, 201, created.text)
  })

  it(`refuses a value nested more than ${maxJsonDepth} deep, and one that writes back to more than ${maxBodyBytes} bytes`, async () => {
    assertError(await host.create(nested(maxJsonDepth + 1)), 400, "invalid_json")
    assert.equal((await host.create(nested(maxJsonDepth))).status, 201)
    assertError(
      await host.create(larger(maxBodyBytes), { chunked: true }),
      413,
      "payload_too_large",
    )
  })

  it("cannot tell a fraction written in an integer field: the text is gone, 1.0 is taken as 1", async () => {
    const created = await host.create('{"name":"Rex","categoryId":1.0}')
    assert.equal(created.status, 201, created.text)
  })
})

describe("under a host that reads the body and keeps nothing of it", () => {
  const drains: Koa.Middleware = async (ctx, next) => {
    if (ctx.method === "POST") await readAll(ctx.req)
    await next()
  }
  const host = hosted({ bodyMiddleware: drains })

  it("answers at once with 500 and the Error body, never waiting for the body again", async () => {
    assertError(
      await host.create(JSON.stringify({ name: "Rex", categoryId: 1 })),
      500,
      "internal_error",
    )
  })
})

describe("under a host with no body parser", () => {
  const host = hosted({ bodyMiddleware: (_ctx, next) => next() })

  it("reads the body itself: 201", async () => {
    const created = await host.create(JSON.stringify({ name: "Rex", categoryId: 1 }))
    assert.equal(created.status, 201, created.text)
  })
})
