import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { IntFromString, PetId, PetNotFound } from "@petstore/core"
import { Effect, Schema } from "effect"
import {
  defineOperation,
  noBody,
  noContent,
  noHeaders,
  noParameters,
  openApiDocument,
  petOperations,
  serveOperation,
  type Handler,
} from "../../src/index.js"
import { apiKey, answerWithinMs, petstoreApp, serve, type Served } from "../harness/mount.js"

/**
 * A new operation of any method and answer is one declaration and its handler: nothing in the
 * serving, the routing or the document changes for it. A throwaway `DELETE /things/{thingId}`
 * answering 204, or 404 through a domain failure, proves it.
 */

const deleteThingOperation = defineOperation({
  id: "deleteThing",
  method: "DELETE",
  path: "/things/{thingId}",
  summary: "Delete a thing",
  description: "Deletes the thing; 404 when there is none.",
  tags: ["things"],
  requiresKey: true,
  params: {
    schema: Schema.Struct({ thingId: Schema.compose(IntFromString, PetId) }),
    parameters: { thingId: { schema: PetId, description: "The thing's identifier." } },
  },
  query: noParameters,
  headers: noHeaders,
  body: noBody,
  success: noContent("The thing is gone."),
  failures: { PetNotFound: true, StorageUnavailable: true },
})

/** Thing 1 exists; every other is not found. */
const deleteThing: Handler<typeof deleteThingOperation> = ({ params }) =>
  params.thingId === 1
    ? Effect.succeed({ value: undefined })
    : Effect.fail(new PetNotFound({ id: params.thingId }))

const codeOf = async (response: Response): Promise<unknown> => {
  const body: unknown = await response.json()
  assert.ok(typeof body === "object" && body !== null && "code" in body)
  return body.code
}

const operations = [...petOperations, serveOperation(deleteThingOperation, deleteThing)]

describe("an operation declared with DELETE and 204", () => {
  const petstore = petstoreApp({ operations })
  let served: Served
  before(async () => {
    served = await serve(petstore.app.callback())
  })
  after(async () => {
    await served.close()
    await petstore.dispose()
  })

  const send = (method: string, path: string, key = true) =>
    fetch(`${served.origin}/v1${path}`, {
      method,
      headers: key ? { Authorization: `Bearer ${apiKey}` } : {},
      signal: AbortSignal.timeout(answerWithinMs),
    })

  it("answers 204 with no body and no Content-Type", async () => {
    const response = await send("DELETE", "/things/1")
    assert.equal(response.status, 204)
    assert.equal(response.headers.get("content-type"), null)
    assert.equal(await response.text(), "")
    assert.match(response.headers.get("x-request-id") ?? "", /./)
  })

  it("answers its domain failure through the one table: 404 pet_not_found", async () => {
    const response = await send("DELETE", "/things/2")
    assert.equal(response.status, 404)
    assert.deepEqual(await response.json(), {
      code: "pet_not_found",
      message: "no pet has id 2",
      status: 404,
    })
  })

  it("decodes its path parameter as declared: 400 invalid_path_parameter", async () => {
    const response = await send("DELETE", "/things/x")
    assert.equal(response.status, 400)
    assert.equal(await codeOf(response), "invalid_path_parameter")
  })

  it("needs a key, as declared", async () => {
    assert.equal((await send("DELETE", "/things/1", false)).status, 401)
  })

  it("is routed by method: another method is 405 with Allow naming DELETE", async () => {
    const response = await send("GET", "/things/1")
    assert.equal(response.status, 405)
    assert.equal(response.headers.get("allow"), "DELETE, OPTIONS")
    assert.equal(await codeOf(response), "method_not_allowed")
  })

  it("is in the document: delete, 204 without content, 404, and its tag", () => {
    const document = openApiDocument({
      basePath: "/v1",
      servers: [{ url: "/v1", description: "here" }],
      operations,
    })
    const described = document.paths["/things/{thingId}"]?.delete
    assert.ok(described !== undefined)
    assert.equal(described.operationId, "deleteThing")
    const noContentResponse = described.responses["204"]
    assert.ok(noContentResponse !== undefined && "description" in noContentResponse)
    assert.equal(noContentResponse.description, "The thing is gone.")
    assert.equal("content" in noContentResponse, false)
    assert.ok(described.responses["404"] !== undefined)
    assert.ok(described.responses["405"] !== undefined)
    assert.deepEqual(
      document.tags.map((tag) => tag.name),
      ["pets", "things"],
    )
  })
})
