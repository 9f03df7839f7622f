import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { createPetstoreClient, type Pet, type PetstoreClient } from "@petstore/client"
import { apiKey, startApp, type AppServer } from "./harness.js"

/** The happy paths through the client generated from the OpenAPI document. */
describe("the typed client against a real server", () => {
  let server: AppServer
  let client: PetstoreClient
  before(async () => {
    server = await startApp({ kind: "memory" })
    client = createPetstoreClient({ baseUrl: `${server.origin}${server.basePath}`, apiKey })
  })
  after(() => server.close())

  const create = async (name: string, status: Pet["status"]) => {
    const { data, response } = await client.POST("/pets", {
      body: { name, categoryId: 7, ...(status === undefined ? {} : { status }) },
    })
    assert.equal(response.status, 201)
    assert.ok(data)
    return { pet: data, location: response.headers.get("location") }
  }

  it("createPet: 201 with the pet and its Location", async () => {
    const { pet, location } = await create("Rex", "available")
    assert.deepEqual(pet, { id: pet.id, name: "Rex", categoryId: 7, status: "available" })
    assert.equal(location, `/v1/pets/${pet.id}`)
  })

  it("listPets: by status and limit, following the Link to the next page", async () => {
    const sold: Array<Pet> = []
    for (let i = 0; i < 5; i++) sold.push((await create(`sold ${i}`, "sold")).pet)
    await create("pending", "pending")

    const seen: Array<Pet> = []
    let cursor: string | undefined
    for (;;) {
      const { data, response } = await client.GET("/pets", {
        params: {
          query: { status: "sold", limit: 2, ...(cursor === undefined ? {} : { cursor }) },
        },
      })
      assert.equal(response.status, 200)
      assert.ok(data)
      assert.ok(data.length <= 2)
      seen.push(...data)
      const next = /^<([^>]+)>; rel="next"$/.exec(response.headers.get("link") ?? "")?.[1]
      if (next === undefined) break
      cursor = new URL(next, server.origin).searchParams.get("cursor") ?? undefined
      assert.ok(cursor)
    }
    assert.deepEqual(seen, sold)
  })

  it("getPet: 200 with the pet and the deprecation headers", async () => {
    const { pet } = await create("Tom", undefined)
    const { data, response } = await client.GET("/pets/{petId}", {
      params: { path: { petId: pet.id } },
    })
    assert.equal(response.status, 200)
    assert.deepEqual(data, { id: pet.id, name: "Tom", categoryId: 7 })
    assert.equal(response.headers.get("deprecation"), "@1795305600")
    assert.equal(response.headers.get("sunset"), "Thu, 05 Dec 2030 00:00:00 GMT")
    assert.equal(response.headers.get("link"), '</v1/pets>; rel="successor-version"')
  })

  it("createPet with an Idempotency-Key: a retry replays the first answer", async () => {
    const send = () =>
      client.POST("/pets", {
        params: { header: { "Idempotency-Key": '"client-retry-1"' } },
        body: { name: "Retried", categoryId: 7 },
      })
    const first = await send()
    const retry = await send()
    assert.equal(first.response.status, 201)
    assert.equal(retry.response.status, 201)
    assert.equal(retry.response.headers.get("idempotent-replayed"), "true")
    assert.deepEqual(retry.data, first.data)
  })

  it("types the Error body of a refusal", async () => {
    const { error, response } = await client.GET("/pets/{petId}", {
      params: { path: { petId: 999_999 } },
    })
    assert.equal(response.status, 404)
    assert.deepEqual(error, {
      code: "pet_not_found",
      message: "no pet has id 999999",
      status: 404,
    })
  })
})
