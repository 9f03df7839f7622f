import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { postJson } from "@petstore/test-support/requests"
import { readPet, startServer, type TestServer } from "../harness/server.js"

const assertDeprecationHeaders = (response: Response) => {
  assert.equal(response.headers.get("deprecation"), "@1795305600")
  assert.equal(response.headers.get("sunset"), "Thu, 05 Dec 2030 00:00:00 GMT")
  assert.equal(response.headers.get("link"), '</v1/pets>; rel="successor-version"')
}

describe("GET /pets/{petId} (getPet, deprecated)", () => {
  let server: TestServer
  let rexId: number
  before(async () => {
    server = await startServer()
    await server.api("/pets", postJson({ name: "First", categoryId: 1 }))
    rexId = (
      await readPet(
        await server.api("/pets", postJson({ name: "Rex", categoryId: 2, status: "sold" })),
      )
    ).id
  })
  after(() => server.close())

  it("answers 200 with the pet", async () => {
    const response = await server.api(`/pets/${rexId}`)
    assert.equal(response.status, 200)
    assert.deepEqual(await readPet(response), {
      id: rexId,
      name: "Rex",
      categoryId: 2,
      status: "sold",
    })
  })

  it("answers 404 with the Error body for an id no pet has", async () => {
    const message = await assertError(await server.api("/pets/424242"), 404, "pet_not_found")
    assert.match(message, /424242/)
    await assertError(await server.api(`/pets/${Number.MAX_SAFE_INTEGER}`), 404, "pet_not_found")
  })

  it("answers 400 naming petId for an id that is not a positive int64 JSON can carry", async () => {
    for (const id of [
      "abc",
      "1.5",
      "-1",
      "0",
      "1e3",
      "9007199254740992",
      "99999999999999999999",
      "%20",
      "0x1",
    ]) {
      const message = await assertError(
        await server.api(`/pets/${id}`),
        400,
        "invalid_path_parameter",
      )
      assert.match(message, /petId/, id)
    }
  })

  it("marks every response as deprecated: Deprecation, Sunset and the successor link", async () => {
    assertDeprecationHeaders(await server.api(`/pets/${rexId}`))
    assertDeprecationHeaders(await server.api("/pets/424242"))
    assertDeprecationHeaders(await server.api("/pets/abc"))
    assertDeprecationHeaders(await server.api(`/pets/${rexId}`, { headers: { Authorization: "" } }))
    assertDeprecationHeaders(await server.api(`/pets/${rexId}`, { method: "HEAD" }))
  })

  it("does not mark the operations that are not deprecated", async () => {
    const list = await server.api("/pets")
    assert.equal(list.headers.get("deprecation"), null)
    assert.equal(list.headers.get("sunset"), null)
    const create = await server.api("/pets", postJson({ name: "New", categoryId: 1 }))
    assert.equal(create.headers.get("deprecation"), null)
  })
})
