import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { postJson } from "@petstore/test-support/requests"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { petOperations } from "../../src/index.js"
import { apiKey, readPet, readPets, startServer, type TestServer } from "../harness/server.js"

/** A raw answer: status, headers (lower-case names) and body text. */
interface RawAnswer {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: string
}

const parseAnswer = (text: string): RawAnswer => {
  const [head = "", body = ""] = text.split("\r\n\r\n", 2)
  const [statusLine = "", ...lines] = head.split("\r\n")
  const headers = new Map(
    lines.map((line) => {
      const colon = line.indexOf(":")
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()] as const
    }),
  )
  return { status: Number(statusLine.split(" ")[1]), headers, body }
}

const newPetBody = JSON.stringify({ name: "Intruder", categoryId: 1 })

/** Sends the request exactly as written: no client normalizes the path on the way. */
const send = async (
  server: TestServer,
  method: string,
  path: string,
  authorization: ReadonlyArray<string>,
): Promise<RawAnswer> => {
  const body = method === "POST" ? newPetBody : ""
  const headers = [
    "Host: 127.0.0.1",
    ...authorization.map((value) => `Authorization: ${value}`),
    ...(body === ""
      ? []
      : ["Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`]),
    "Connection: close",
  ]
  return parseAnswer(
    await rawRequest(
      server.origin,
      `${method} ${path} HTTP/1.1\r\n${headers.join("\r\n")}\r\n\r\n${body}`,
    ),
  )
}

/** Spellings a client might hope a server treats as `path`, while a strict router does not. */
const hostileSpellings = (path: string): ReadonlyArray<string> => {
  const segments = path.split("/").slice(1)
  const last = segments.length - 1
  const upper = (index: number) =>
    `/${segments.map((segment, i) => (i === index ? segment.toUpperCase() : segment)).join("/")}`
  const encodeFirstLetter = (segment: string) =>
    segment.replace(/[a-z]/, (letter) => `%${letter.charCodeAt(0).toString(16)}`)
  const spellings = [
    path.toUpperCase(),
    upper(0),
    upper(last),
    `/${segments.map((segment) => segment[0]?.toUpperCase() + segment.slice(1)).join("/")}`,
    `${path}/`,
    `/${path}`,
    path.replace("/v1/", "/v1//"),
    `${path}//`,
    path.replace("/v1/", "/v1/./"),
    path.replace("/v1/", "/v1/x/../"),
    `/.${path}`,
    `${path}/.`,
    path.replace("/v1/", "/v1/%2e/"),
    path.replace("/v1/", "/%2e%2e/v1/"),
    `/${segments.map(encodeFirstLetter).join("/")}`,
    path.replace("/v1/", "/%76%31/"),
    path.replace("/v1/", "/v1%2f"),
    path.replace("/v1/", "/v1%2F"),
    `${path}%2f`,
    `${path}%20`,
    `${path}%00`,
    `${path};x=1`,
    path.replace("/v1/", "/v1\\"),
    path.replace("/v1/", "/V1/").replace("/pets", "/PETS"),
    `//%@127.0.0.1${path}#`,
  ]
  return [...new Set(spellings)].filter((spelling) => spelling !== path)
}

/** Each operation at a concrete path: the declared template with a path parameter filled in. */
const operations = petOperations.map((operation) => ({
  id: operation.id,
  method: operation.method,
  path: `/v1${operation.path.replace("{petId}", "1")}`,
  deprecated: operation.deprecation._tag === "Some",
}))

const isSuccess = (status: number) => status >= 200 && status < 300

describe("routing and authentication under hostile path spellings", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
    assert.equal((await server.api("/pets", postJson({ name: "Rex", categoryId: 1 }))).status, 201)
  })
  after(() => server.close())

  for (const operation of operations) {
    it(`${operation.id}: no spelling of ${operation.method} ${operation.path} is answered without a key`, async () => {
      for (const spelling of [operation.path, ...hostileSpellings(operation.path)]) {
        for (const authorization of [[], ["Bearer not-the-key"], [`Basic ${apiKey}`]]) {
          const answer = await send(server, operation.method, spelling, authorization)
          assert.ok(!isSuccess(answer.status), `${operation.method} ${spelling} → ${answer.status}`)
          assert.ok(
            answer.status === 401 || answer.status === 400,
            `${operation.method} ${spelling} → ${answer.status} ${answer.body}`,
          )
          assert.match(answer.body, new RegExp(`"status":${answer.status}\\}$`))
        }
      }
    })

    it(`${operation.id}: with a key, a spelling other than the declared one is not routed to it`, async () => {
      for (const spelling of hostileSpellings(operation.path)) {
        const answer = await send(server, operation.method, spelling, [`Bearer ${apiKey}`])
        // 405: `/v1/pets/.` is getPet's path with petId ".", which allows no POST.
        assert.ok(
          [400, 404, 405].includes(answer.status),
          `${operation.method} ${spelling} → ${answer.status} ${answer.body}`,
        )
      }
    })
  }

  it("no create sent under a spelling other than the declared one stores a pet", async () => {
    const pets = await readPets(await server.api("/pets?limit=100"))
    assert.deepEqual(
      pets.filter((pet) => pet.name === "Intruder"),
      [],
    )
  })

  it("every answer of getPet's route carries its deprecation headers, 401 and 400 included", async () => {
    const getPet = operations.find((operation) => operation.deprecated)
    assert.ok(getPet)
    for (const [path, authorization, status] of [
      ["/v1/pets/1", [], 401],
      ["/v1/pets/1", ["Bearer wrong"], 401],
      ["/v1/pets/abc", [], 401],
      ["/v1/pets/1", [`Bearer ${apiKey}`], 200],
      ["/v1/pets/%31", [`Bearer ${apiKey}`], 200],
      ["/v1/pets/999", [`Bearer ${apiKey}`], 404],
      ["/v1/pets/abc", [`Bearer ${apiKey}`], 400],
      ["/v1/pets/%E0%A4%A", [`Bearer ${apiKey}`], 400],
    ] as const) {
      for (const method of ["GET", "HEAD"]) {
        const answer = await send(server, method, path, authorization)
        assert.equal(answer.status, status, `${method} ${path}`)
        assert.equal(answer.headers.get("deprecation"), "@1795305600", `${method} ${path}`)
        assert.equal(answer.headers.get("sunset"), "Thu, 05 Dec 2030 00:00:00 GMT")
        assert.equal(answer.headers.get("link"), '</v1/pets>; rel="successor-version"')
      }
    }
  })

  it("the declared spelling with a key is served", async () => {
    const created = await readPet(
      await server.api("/pets", postJson({ name: "Tom", categoryId: 2 })),
    )
    const answer = await send(server, "GET", `/v1/pets/${created.id}`, [`Bearer ${apiKey}`])
    assert.equal(answer.status, 200)
  })

  it("a target with a fragment, or one Koa cannot parse, is 400 before routing, with or without a key", async () => {
    const fragment = "the request target has a fragment (#): send the path and query only"
    const unparsable = "the request target is not a valid path"
    for (const [target, message] of [
      // Node's parser lets a fragment through; Koa reads it with Node's legacy `url.parse`,
      // which cannot decode `%` as a user name (this one was a 500).
      ["//%@a/#?limit=1", fragment],
      ["/v1/pets?limit=1#top", fragment],
      ["/v1/pets#/../healthz", fragment],
      ["/healthz#", fragment],
      // The absolute form goes to `url.parse` without a fragment.
      ["http://%@127.0.0.1/v1/pets", unparsable],
    ] as const) {
      for (const authorization of [[], [`Bearer ${apiKey}`]]) {
        const answer = await send(server, "GET", target, authorization)
        assert.equal(
          answer.body,
          JSON.stringify({ code: "bad_request", message, status: 400 }),
          target,
        )
        assert.equal(answer.status, 400, target)
        assert.ok(answer.headers.has("x-request-id"), target)
      }
    }
  })

  it("a target in absolute form is routed by its path", async () => {
    const answer = await send(server, "GET", "http://127.0.0.1/v1/pets?limit=1", [
      `Bearer ${apiKey}`,
    ])
    assert.equal(answer.status, 200, answer.body)
  })

  it("two Authorization headers are refused, whichever comes first", async () => {
    for (const pair of [
      [`Bearer ${apiKey}`, "Bearer wrong"],
      ["Bearer wrong", `Bearer ${apiKey}`],
      [`Bearer ${apiKey}`, `Bearer ${apiKey}`],
    ]) {
      const answer = await send(server, "GET", "/v1/pets", pair)
      assert.equal(answer.status, 401, pair.join(" + "))
      assert.match(answer.body, /"code":"unauthorized"/)
    }
  })
})
