import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { postJson } from "@petstore/test-support/requests"
import {
  apiKey,
  readPet,
  readPets,
  startServer,
  type PetBody,
  type TestServer,
} from "../harness/server.js"

const statuses = ["available", "pending", "sold", undefined] as const

/** Follows `Link: rel="next"` from `path` to the end; returns every pet and every page size. */
const followNextLinks = async (server: TestServer, path: string) => {
  const pets: Array<PetBody> = []
  const pageSizes: Array<number> = []
  let next: string | undefined = `${server.basePath}${path}`
  while (next !== undefined) {
    const response: Response = await fetch(`${server.origin}${next}`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    })
    assert.equal(response.status, 200)
    const page = await readPets(response)
    pets.push(...page)
    pageSizes.push(page.length)
    next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get("link") ?? "")?.[1]
  }
  return { pets, pageSizes }
}

describe("GET /pets (listPets)", () => {
  let server: TestServer
  const created: Array<PetBody> = []

  before(async () => {
    server = await startServer()
    for (let i = 0; i < 45; i++) {
      const status = statuses[i % statuses.length]
      const response = await server.api(
        "/pets",
        postJson({ name: `pet ${i}`, categoryId: i, ...(status ? { status } : {}) }),
      )
      created.push(await readPet(response))
    }
  })
  after(() => server.close())

  it("answers 200 with a bare JSON array of Pets", async () => {
    const response = await server.api("/pets")
    assert.equal(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^application\/json/)
    const pets = await readPets(response)
    assert.deepEqual(pets[0], created[0])
  })

  it("rule 2: without limit, returns at most 20", async () => {
    const pets = await readPets(await server.api("/pets"))
    assert.equal(pets.length, 20)
  })

  it("rule 3: never returns more than limit", async () => {
    for (const limit of [1, 7, 20, 44, 45, 100]) {
      const pets = await readPets(await server.api(`/pets?limit=${limit}`))
      assert.equal(pets.length, Math.min(limit, created.length), `limit=${limit}`)
    }
  })

  it("rule 1: with status, returns only pets with that status", async () => {
    for (const status of ["available", "pending", "sold"]) {
      const pets = await readPets(await server.api(`/pets?status=${status}&limit=100`))
      assert.ok(pets.length > 0)
      assert.ok(
        pets.every((pet) => pet.status === status),
        status,
      )
      assert.deepEqual(
        pets,
        created.filter((pet) => pet.status === status),
      )
    }
  })

  it("orders pets by ascending id", async () => {
    const pets = await readPets(await server.api("/pets?limit=100"))
    const ids = pets.map((pet) => pet.id)
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
    )
  })

  it("refuses a limit outside 1..100 or not an integer with 400 naming limit", async () => {
    for (const limit of ["0", "101", "-1", "abc", "1.5", "", "1e1", "%20", "9007199254740993"]) {
      const response = await server.api(`/pets?limit=${limit}`)
      const message = await assertError(response, 400, "invalid_query")
      assert.match(message, /limit/, `limit=${limit}: ${message}`)
    }
  })

  it("refuses an unknown status with 400 naming status", async () => {
    for (const status of ["lost", "SOLD", ""]) {
      const message = await assertError(
        await server.api(`/pets?status=${status}`),
        400,
        "invalid_query",
      )
      assert.match(message, /status/)
    }
  })

  it("refuses a parameter given twice with 400 naming it", async () => {
    const message = await assertError(
      await server.api("/pets?limit=1&limit=2"),
      400,
      "invalid_query",
    )
    assert.match(message, /limit/)
  })

  it("ignores query parameters it does not define", async () => {
    const response = await server.api("/pets?limit=2&offset=5&foo")
    assert.equal(response.status, 200)
    assert.equal((await readPets(response)).length, 2)
  })

  it("links to the next page while more pets remain, and not after the last", async () => {
    const first = await server.api("/pets?limit=40")
    assert.match(
      first.headers.get("link") ?? "",
      /^<\/v1\/pets\?limit=40&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
    )
    const last = await server.api("/pets?limit=45")
    assert.equal(last.headers.get("link"), null)
  })

  it("following next links visits every pet exactly once, in order", async () => {
    const { pets, pageSizes } = await followNextLinks(server, "/pets?limit=7")
    assert.deepEqual(pets, created)
    assert.deepEqual(pageSizes, [7, 7, 7, 7, 7, 7, 3])
  })

  it("following next links with a status keeps the filter", async () => {
    const { pets } = await followNextLinks(server, "/pets?status=sold&limit=4")
    assert.deepEqual(
      pets,
      created.filter((pet) => pet.status === "sold"),
    )
  })

  it("refuses a malformed or forged cursor with 400 naming cursor", async () => {
    for (const cursor of [
      "abc",
      "",
      "YWZ0ZXI6MA",
      Buffer.from("after:x").toString("base64url"),
      "%00",
    ]) {
      const message = await assertError(
        await server.api(`/pets?cursor=${cursor}`),
        400,
        "invalid_query",
      )
      assert.match(message, /cursor/)
    }
  })

  it("refuses a cursor over 200 characters with 400, and a huge URL with Node's 431 Error body", async () => {
    const message = await assertError(
      await server.api(`/pets?cursor=${"A".repeat(201)}`),
      400,
      "invalid_query",
    )
    assert.match(message, /cursor is longer than 200 characters/)
    await assertError(
      await server.api(`/pets?cursor=${"A".repeat(60_000)}`),
      431,
      "headers_too_large",
    )
  })

  it("a cursor is a position: a hand-made one that decodes starts the page after that id", async () => {
    const third = created[2]
    assert.ok(third)
    const cursor = Buffer.from(`after:${third.id}`).toString("base64url")
    const pets = await readPets(await server.api(`/pets?limit=2&cursor=${cursor}`))
    assert.deepEqual(pets, created.slice(3, 5))
  })

  it("answers HEAD like GET, without a body", async () => {
    const response = await server.api("/pets", { method: "HEAD" })
    assert.equal(response.status, 200)
    assert.equal(await response.text(), "")
  })
})

describe("GET /pets on an empty store", () => {
  let server: TestServer
  before(async () => {
    server = await startServer()
  })
  after(() => server.close())

  it("answers an empty array and no next link", async () => {
    const response = await server.api("/pets")
    assert.deepEqual(await response.json(), [])
    assert.equal(response.headers.get("link"), null)
  })
})
