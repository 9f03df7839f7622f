import assert from "node:assert/strict"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, it } from "node:test"
import SwaggerParser from "@apidevtools/swagger-parser"
import { CategoryId, Limit, ListPetsQuery, PetId, PetName } from "@petstore/core"
import { Schema } from "effect"
import { openApiDocument, petOperations, sameOriginServers } from "../../src/index.js"
import type {
  Header,
  JsonObject,
  JsonValue,
  Reference,
  Response,
} from "../../src/vocabulary/openapi-types.js"
import { operationsOf } from "./contract.js"
import { documentResolver } from "./json-schema-check.js"

const document = openApiDocument({
  basePath: "/v1",
  servers: sameOriginServers("/v1"),
  operations: petOperations,
})
const resolve = documentResolver(document)

const operation = (operationId: string) => {
  const found = operationsOf(document).find((entry) => entry.operation.operationId === operationId)
  assert.ok(found, `no operation ${operationId}`)
  return found
}

const headerNames = (response: Response | undefined) => Object.keys(response?.headers ?? {}).sort()

/** A header as a response lists it: inline, or a `$ref` to `components.headers`. */
const headerOf = (header: Header | Reference | undefined): Header =>
  header !== undefined && !("$ref" in header) ? header : headerComponent(header)

const headerComponent = (header: Header | Reference | undefined): Header => {
  const name = header !== undefined && "$ref" in header ? header.$ref.split("/").pop() : undefined
  const resolved = name === undefined ? undefined : document.components.headers[name]
  assert.ok(resolved, "a header is a $ref to components.headers")
  return resolved
}

const isJsonObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const field = (value: JsonValue | undefined, key: string): JsonValue | undefined =>
  isJsonObject(value) ? value[key] : undefined

/** The `code` values an Error response allows: `allOf: [Error, { properties: { code: { enum } } }]`. */
const codesOf = (response: Response | undefined) => {
  const parts = response?.content?.["application/json"]?.schema["allOf"]
  return field(
    field(field(Array.isArray(parts) ? parts[1] : undefined, "properties"), "code"),
    "enum",
  )
}

describe("the OpenAPI document", () => {
  it("is valid OpenAPI 3.1 according to swagger-parser", async () => {
    // validate() dereferences what it is given in place: it gets a copy, through a file.
    const folder = await mkdtemp(join(tmpdir(), "petstore-openapi-"))
    try {
      const file = join(folder, "openapi.json")
      await writeFile(file, JSON.stringify(document))
      await SwaggerParser.validate(file)
    } finally {
      await rm(folder, { recursive: true })
    }
  })

  it("names the three operations on their paths, as the operation table declares them", () => {
    assert.deepEqual(
      operationsOf(document).map(({ path, method, operation }) => [
        operation.operationId,
        method.toUpperCase(),
        path,
      ]),
      [
        ["listPets", "GET", "/pets"],
        ["createPet", "POST", "/pets"],
        ["getPet", "GET", "/pets/{petId}"],
      ],
    )
    assert.deepEqual(
      petOperations.map(({ id, method, path }) => [id, method, path]),
      operationsOf(document).map(({ path, method, operation }) => [
        operation.operationId,
        method.toUpperCase(),
        path,
      ]),
    )
  })

  it("documents every status each operation answers with", () => {
    const statuses = (operationId: string) =>
      Object.keys(operation(operationId).operation.responses)
    const everywhere = ["401", "405", "408", "417", "429", "431", "500", "503"]
    const sorted = (list: ReadonlyArray<string>) => [...list].sort()
    assert.deepEqual(statuses("listPets"), sorted(["200", "400", ...everywhere]))
    assert.deepEqual(
      statuses("createPet"),
      sorted(["201", "400", "409", "413", "415", "422", ...everywhere]),
    )
    assert.deepEqual(statuses("getPet"), sorted(["200", "400", "404", ...everywhere]))
  })

  it("names the error codes of each error response", () => {
    const codes = (operationId: string, status: string) =>
      codesOf(operation(operationId).operation.responses[status])
    assert.deepEqual(codes("listPets", "400"), ["bad_request", "invalid_query"])
    assert.deepEqual(codes("createPet", "400"), [
      "bad_request",
      "invalid_json",
      "invalid_body",
      "invalid_idempotency_key",
    ])
    assert.deepEqual(codes("createPet", "409"), ["idempotency_key_in_use"])
    assert.deepEqual(codes("createPet", "422"), ["idempotency_key_reused"])
    assert.deepEqual(codes("createPet", "413"), ["payload_too_large"])
    assert.deepEqual(codes("createPet", "415"), ["unsupported_media_type"])
    assert.deepEqual(codes("getPet", "400"), ["bad_request", "invalid_path_parameter"])
    assert.deepEqual(codes("getPet", "404"), ["pet_not_found"])
    for (const { operation } of operationsOf(document)) {
      assert.deepEqual(codesOf(operation.responses["401"]), ["unauthorized"])
      assert.deepEqual(codesOf(operation.responses["405"]), ["method_not_allowed"])
      assert.deepEqual(codesOf(operation.responses["408"]), ["request_timeout"])
      assert.deepEqual(codesOf(operation.responses["417"]), ["expectation_failed"])
      assert.deepEqual(codesOf(operation.responses["429"]), ["rate_limited"])
      assert.deepEqual(codesOf(operation.responses["431"]), ["headers_too_large"])
      assert.deepEqual(codesOf(operation.responses["500"]), ["internal_error"])
      assert.deepEqual(codesOf(operation.responses["503"]), ["storage_unavailable", "overloaded"])
    }
  })

  it("documents the headers: Link, Location, WWW-Authenticate, Allow, Retry-After, Deprecation, Sunset, RateLimit, X-Request-Id", () => {
    const responses = (operationId: string) => operation(operationId).operation.responses
    const admitted = ["RateLimit", "RateLimit-Policy"]
    assert.deepEqual(headerNames(responses("listPets")["200"]), [
      "Link",
      ...admitted,
      "X-Request-Id",
    ])
    assert.equal(headerComponent(responses("listPets")["200"]?.headers?.["Link"]).required, false)
    assert.deepEqual(headerNames(responses("createPet")["201"]), [
      "Idempotent-Replayed",
      "Location",
      ...admitted,
      "X-Request-Id",
    ])
    assert.ok(headerNames(responses("createPet")["409"]).includes("Retry-After"))
    for (const { operation } of operationsOf(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.ok(headerOf(response.headers?.["X-Request-Id"]).required, `${status} X-Request-Id`)
        // Only what the operation's route answers after admitting a key has the key's limit.
        const afterAdmission = !["401", "408", "417", "431"].includes(status)
        for (const name of admitted) {
          assert.equal(headerNames(response).includes(name), afterAdmission, `${status} ${name}`)
          if (afterAdmission) assert.equal(headerOf(response.headers?.[name]).required, false)
        }
      }
      assert.ok(headerNames(operation.responses["429"]).includes("Retry-After"))
      assert.ok(headerNames(operation.responses["401"]).includes("WWW-Authenticate"))
      assert.ok(headerNames(operation.responses["405"]).includes("Allow"))
      assert.ok(headerNames(operation.responses["503"]).includes("Retry-After"))
    }
    // Every answer of getPet's own route carries them; the router's 405 and Node's replies cannot
    // (a 503 may be admission control's `overloaded`: there they are optional).
    for (const [status, response] of Object.entries(responses("getPet"))) {
      const expected = ["405", "408", "417", "431"].includes(status)
        ? []
        : ["Deprecation", "Link", "Sunset"]
      assert.deepEqual(
        headerNames(response).filter((name) => ["Deprecation", "Sunset", "Link"].includes(name)),
        expected,
        status,
      )
      for (const name of expected) {
        assert.equal(
          headerOf(response.headers?.[name]).required,
          !["400", "503"].includes(status),
          `${status} ${name}`,
        )
      }
    }
  })

  it("requires the bearer scheme of every operation", () => {
    assert.deepEqual(document.components.securitySchemes["bearerAuth"], {
      type: "http",
      scheme: "bearer",
      description: "An API key of the service, sent as `Authorization: Bearer <key>`.",
    })
    for (const { operation } of operationsOf(document)) {
      assert.deepEqual(operation.security, [{ bearerAuth: [] }], operation.operationId)
    }
  })

  it("marks getPet deprecated, with its sunset on 5 December 2030", () => {
    const { operation: getPet } = operation("getPet")
    assert.equal(getPet.deprecated, true)
    assert.equal(getPet["x-sunset"], "2030-12-05")
    assert.match(getPet.description, /5 December 2030/)
    assert.equal(
      headerOf(getPet.responses["200"]?.headers?.["Sunset"]).schema["const"],
      "Thu, 05 Dec 2030 00:00:00 GMT",
    )
    assert.equal(operation("listPets").operation.deprecated, undefined)
  })

  it("describes listPets' parameters: limit 1..100 by default 20, the status enum, the opaque cursor", () => {
    const parameters = operation("listPets").operation.parameters ?? []
    assert.deepEqual(
      parameters.map(({ name, in: where, required }) => [name, where, required]),
      Object.keys(ListPetsQuery.fields).map((name) => [name, "query", false]),
    )
    const schemaOf = (name: string) => {
      const schema = parameters.find((parameter) => parameter.name === name)?.schema
      const ref = schema?.["$ref"]
      assert.ok(typeof ref === "string")
      return resolve(ref)
    }
    assert.deepEqual(schemaOf("limit"), {
      type: "integer",
      description: "Maximum number of animals returned.",
      default: 20,
      format: "int32",
      minimum: 1,
      maximum: 100,
    })
    assert.deepEqual(schemaOf("status")["enum"], ["available", "pending", "sold"])
    assert.equal(schemaOf("cursor")["type"], "string")
  })

  it("describes NewPet and Pet: a name of 1 to 255 characters, int64 ids within ±(2^53 − 1)", () => {
    const body = operation("createPet").operation.requestBody
    assert.equal(body?.required, true)
    assert.deepEqual(body?.content["application/json"]?.schema, {
      $ref: "#/components/schemas/NewPet",
    })
    const schemas = document.components.schemas
    assert.deepEqual(schemas["NewPet"]?.["required"], ["name", "categoryId"])
    assert.equal(
      schemas["NewPet"]?.["additionalProperties"],
      undefined,
      "extra properties are ignored",
    )
    assert.deepEqual(schemas["Pet"]?.["required"], ["id", "name", "categoryId"])
    assert.equal(schemas["Pet"]?.["additionalProperties"], false)
    assert.deepEqual(
      [schemas["PetName"]?.["minLength"], schemas["PetName"]?.["maxLength"]],
      [1, 255],
    )
    const max = Number.MAX_SAFE_INTEGER
    for (const [name, minimum] of [
      ["CategoryId", -max],
      ["PetId", 1],
    ] as const) {
      const schema = schemas[name]
      assert.deepEqual(
        [schema?.["type"], schema?.["format"], schema?.["minimum"], schema?.["maximum"]],
        ["integer", "int64", minimum, max],
        name,
      )
    }
  })

  it("states the bounds the core schemas enforce, exactly", () => {
    const cases: ReadonlyArray<[string, Schema.Schema.AnyNoContext]> = [
      ["Limit", Limit],
      ["PetId", PetId],
      ["CategoryId", CategoryId],
    ]
    for (const [name, schema] of cases) {
      const { minimum, maximum } = resolve(`#/components/schemas/${name}`)
      assert.ok(typeof minimum === "number" && typeof maximum === "number")
      const accepts = Schema.is(schema)
      assert.deepEqual(
        [accepts(minimum - 1), accepts(minimum), accepts(maximum), accepts(maximum + 1)],
        [false, true, true, false],
        name,
      )
    }
    const { minLength, maxLength } = resolve("#/components/schemas/PetName")
    assert.ok(typeof minLength === "number" && typeof maxLength === "number")
    const accepts = Schema.is(PetName)
    const text = (length: number) => "x".repeat(length)
    assert.deepEqual(
      [accepts(text(minLength - 1)), accepts(text(minLength)), accepts(text(maxLength))],
      [false, true, true],
    )
    assert.equal(accepts(text(maxLength + 1)), false)
  })

  it("is a function of its inputs: the base path shapes Link and Location", () => {
    const other = openApiDocument({
      basePath: "/api/v2",
      servers: sameOriginServers("/api/v2"),
      operations: petOperations,
    })
    const getPet = other.paths["/pets/{petId}"]?.get
    assert.equal(
      headerOf(getPet?.responses["200"]?.headers?.["Link"]).schema["const"],
      '</api/v2/pets>; rel="successor-version"',
    )
    assert.match(String(other.components.headers["Location"]?.schema["pattern"]), /api\/v2/)
    assert.deepEqual(other.servers, [{ url: "/api/v2", description: "This server" }])
  })
})
