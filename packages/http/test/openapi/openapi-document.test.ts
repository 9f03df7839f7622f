import assert from "node:assert/strict"
import { createServer } from "node:http"
import { describe, it } from "node:test"
import { CategoryId, maxLimit, Pet, PetId, PetName } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { FastCheck as fc, ManagedRuntime, Schema } from "effect"
import { createApp } from "../../src/app.js"
import { openApiDocument } from "../../src/openapi/openapi-document.js"
import { sameOriginServers } from "../../src/openapi/servers.js"
import { Pets } from "../../src/operations/pet-api.js"
import { petOperations } from "../../src/operations/pet-operations.js"
import { errorCatalogue, errorCodes } from "../../src/vocabulary/error-catalogue.js"
import type {
  Header,
  JsonSchema,
  JsonValue,
  Reference,
  Response,
} from "../../src/vocabulary/openapi-types.js"

const document = openApiDocument({
  basePath: "/v1",
  servers: sameOriginServers("/v1"),
  operations: petOperations,
})

const operations = Object.values(document.paths).flatMap((item) =>
  Object.values(item).map((operation) => operation),
)

const headerOf = (header: Header | Reference | undefined): Header | undefined =>
  header === undefined || !("$ref" in header)
    ? header
    : document.components.headers[header.$ref.split("/").pop() ?? ""]

/** The codes an error response names: `allOf: [Error, { properties: { code: { enum } } }]`. */
const codesOf = (response: Response | undefined): ReadonlyArray<JsonValue> => {
  const parts = response?.content?.["application/json"]?.schema["allOf"]
  const extra: JsonValue | undefined = Array.isArray(parts) ? parts[1] : undefined
  const isObject = (value: JsonValue | undefined): value is JsonSchema =>
    typeof value === "object" && value !== null && !Array.isArray(value)
  const properties = isObject(extra) ? extra["properties"] : undefined
  const code = isObject(properties) ? properties["code"] : undefined
  const codes = isObject(code) ? code["enum"] : undefined
  return Array.isArray(codes) ? codes : []
}

describe("the document's error responses", () => {
  it("declare RateLimit-Policy and RateLimit, optional, on the 405 a key-holder gets", () => {
    for (const operation of operations) {
      const headers = operation.responses["405"]?.headers ?? {}
      for (const name of ["RateLimit-Policy", "RateLimit"]) {
        assert.equal(headerOf(headers[name])?.required, false, `${operation.operationId} ${name}`)
      }
    }
  })

  it("list every refusal of Node's own on every operation, bad_request among them", () => {
    const nodeCodes = errorCodes.filter((code) => errorCatalogue[code].origin === "node")
    assert.ok(nodeCodes.includes("bad_request"))
    for (const operation of operations) {
      const listed = Object.values(operation.responses).flatMap((response) => codesOf(response))
      for (const code of nodeCodes) {
        assert.ok(listed.includes(code), `${operation.operationId} lists ${code}`)
      }
      assert.ok(codesOf(operation.responses["400"]).includes("bad_request"))
    }
  })

  it("mark a header required only where every code of the response carries it", () => {
    const getPet = document.paths["/pets/{petId}"]?.get
    // Node's bad_request shares the 400 with the route's own refusals, but not their headers.
    for (const name of ["Deprecation", "Sunset", "Link"]) {
      assert.equal(headerOf(getPet?.responses["400"]?.headers?.[name])?.required, false, name)
      assert.equal(headerOf(getPet?.responses["404"]?.headers?.[name])?.required, true, name)
    }
    for (const operation of operations) {
      assert.equal(headerOf(operation.responses["405"]?.headers?.["Allow"])?.required, true)
    }
  })
})

describe("the document's schemas", () => {
  it("bound Pets by the largest limit, as the schema does", () => {
    assert.equal(document.components.schemas["Pets"]?.["maxItems"], maxLimit)
    const pet = new Pet({ id: PetId.make(1), name: "Rex", categoryId: CategoryId.make(1) })
    assert.equal(Schema.is(Pets)(Array.from({ length: maxLimit }, () => pet)), true)
    assert.equal(Schema.is(Pets)(Array.from({ length: maxLimit + 1 }, () => pet)), false)
  })

  it("describe PetName as the schema decides it, lone surrogates and U+0000 included", () => {
    const schema = document.components.schemas["PetName"]
    const pattern = schema?.["pattern"]
    const [minLength, maxLength] = [schema?.["minLength"], schema?.["maxLength"]]
    assert.ok(typeof pattern === "string")
    assert.ok(typeof minLength === "number" && typeof maxLength === "number")
    const isPetName = Schema.is(PetName)
    // JSON Schema's patterns are Unicode-aware; validators that read them without `u` agree.
    const documented = (flags: string) => (name: string) => {
      const length = [...name].length
      return length >= minLength && length <= maxLength && new RegExp(pattern, flags).test(name)
    }
    const names = fc.oneof(
      fc.string({ unit: fc.constantFrom("a", "\u0000", "\ud83d", "\udc36", "\ud83d\udc36", "é") }),
      fc.string({ unit: "binary", maxLength: 8 }),
      fc.string({ unit: fc.constantFrom("a", "\ud83d\udc36"), minLength: 250, maxLength: 260 }),
      fc.constantFrom("", "\ud800", "\udc00", "a\ud800b", "\udc00\ud800", "\ud800\udc00"),
    )
    fc.assert(
      fc.property(names, (name) => {
        assert.equal(documented("u")(name), isPetName(name), JSON.stringify(name))
        assert.equal(documented("")(name), isPetName(name), JSON.stringify(name))
      }),
      { numRuns: 3_000 },
    )
  })
})

describe("a 405 answered to a key-holder", () => {
  it("carries the headers its documented response declares, RateLimit ones included", async () => {
    const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
    const app = createApp({
      runtime,
      apiKeys: ["key-1"],
      limits: { perKey: { capacity: 10, windowSeconds: 10 } },
    })
    const server = createServer(app.callback())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const address = server.address()
      assert.ok(typeof address === "object" && address !== null)
      const response = await fetch(`http://127.0.0.1:${address.port}/v1/pets/1`, {
        method: "DELETE",
        headers: { Authorization: "Bearer key-1" },
      })
      assert.equal(response.status, 405)
      const declared = Object.keys(
        document.paths["/pets/{petId}"]?.get?.responses["405"]?.headers ?? {},
      ).map((name) => name.toLowerCase())
      for (const name of ["ratelimit-policy", "ratelimit", "allow", "x-request-id"]) {
        assert.ok(response.headers.has(name), `sent ${name}`)
        assert.ok(declared.includes(name), `declared ${name}`)
      }
    } finally {
      server.close()
      await runtime.dispose()
    }
  })
})
