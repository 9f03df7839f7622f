import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { createPetstoreClient } from "../src/index.js"

/** A fetch that records each request and answers with `body`. */
const recordingFetch = (status: number, body: unknown) => {
  const requests: Array<Request> = []
  const fetch = async (request: Request) => {
    requests.push(request)
    return new Response(JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json" },
    })
  }
  return { requests, fetch }
}

describe("createPetstoreClient", () => {
  it("sends the API key as a bearer token to the path under the base URL", async () => {
    const { requests, fetch } = recordingFetch(200, [])
    const client = createPetstoreClient({ baseUrl: "http://pets.test/v1", apiKey: "k-1", fetch })
    const { data } = await client.GET("/pets", { params: { query: { status: "sold", limit: 5 } } })
    assert.deepEqual(data, [])
    const [request] = requests
    assert.equal(request?.url, "http://pets.test/v1/pets?status=sold&limit=5")
    assert.equal(request?.headers.get("authorization"), "Bearer k-1")
  })

  it("sends a new pet as JSON and types the error body", async () => {
    const error = { code: "invalid_body", message: "name is missing", status: 400 }
    const { requests, fetch } = recordingFetch(400, error)
    const client = createPetstoreClient({ baseUrl: "http://pets.test/v1", apiKey: "k-1", fetch })
    const response = await client.POST("/pets", { body: { name: "Rex", categoryId: 1 } })
    assert.deepEqual(response.error, error)
    const [request] = requests
    assert.equal(request?.method, "POST")
    assert.equal(request?.headers.get("content-type"), "application/json")
    assert.deepEqual(await request?.json(), { name: "Rex", categoryId: 1 })
  })
})
