import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { NewPet, StorageUnavailable } from "@petstore/core"
import { failingRepository } from "@petstore/storage/testing"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import {
  maxBodyBytes,
  petOperations,
  openApiDocument,
  type JsonSchema,
  sameOriginServers,
} from "../../src/index.js"
import {
  contractOf,
  operationsOf,
  type Answer,
  type ContractRequest,
  type DocumentedOperation,
} from "./contract.js"
import { apiKey, PetBody, startServer, type TestServer } from "../harness/server.js"
import { invalidText, invalidValue, jsonText, validText, validValue } from "./schema-arbitraries.js"

/**
 * Property-based contract tests in the spirit of Schemathesis: requests generated from the
 * OpenAPI document's schemas, valid and deliberately invalid, sent to a running server. Every
 * answer must be documented for its operation (status, content type, body, headers), none is
 * a 5xx, valid input is accepted, invalid input refused, and no operation runs without a key.
 */

const basePath = "/v1"
const document = openApiDocument({
  basePath,
  servers: sameOriginServers(basePath),
  operations: petOperations,
})
const contract = contractOf(document)
const { resolve } = contract
const runs = { valid: 200, invalid: 300, unauthorized: 100, methods: 100 }

const operationNamed = (operationId: string): DocumentedOperation => {
  const found = operationsOf(document).find((entry) => entry.operation.operationId === operationId)
  assert.ok(found, `the document has no ${operationId}`)
  return found
}
const listPets = operationNamed("listPets")
const createPet = operationNamed("createPet")
const getPet = operationNamed("getPet")

const parameterSchema = ({ operation }: DocumentedOperation, name: string): JsonSchema => {
  const schema = operation.parameters?.find((parameter) => parameter.name === name)?.schema
  assert.ok(schema, `${operation.operationId} has no parameter ${name}`)
  return schema
}
const bodySchema = ({ operation }: DocumentedOperation): JsonSchema => {
  const schema = operation.requestBody?.content["application/json"]?.schema
  assert.ok(schema, `${operation.operationId} has no JSON body`)
  return schema
}

const limitSchema = parameterSchema(listPets, "limit")
const statusSchema = parameterSchema(listPets, "status")
const petIdSchema = parameterSchema(getPet, "petId")
const newPetSchema = bodySchema(createPet)

const defaultLimit = (() => {
  const limit = resolve(`#/components/schemas/Limit`)["default"]
  assert.equal(typeof limit, "number")
  return Number(limit)
})()

type Query = ReadonlyArray<readonly [string, string]>

const queryString = (query: Query) =>
  query.length === 0
    ? ""
    : `?${new URLSearchParams(query.map(([name, value]): [string, string] => [name, value]))}`

/** A request with what it is expected to get when sent with a valid key. */
interface Case {
  readonly request: ContractRequest
  readonly expected: number
}

const get = (path: string): ContractRequest => ({ method: "GET", path, headers: {} })

const postBody = (body: string | Uint8Array, headers: Record<string, string>): ContractRequest => ({
  method: "POST",
  path: "/pets",
  headers,
  body,
})

const documentedNames = new Set((listPets.operation.parameters ?? []).map(({ name }) => name))
// Each name once: a parameter given twice is refused, whatever its name.
const unknownParameters = fc.uniqueArray(
  fc.tuple(
    fc.string({ minLength: 1, maxLength: 8 }).filter((name) => !documentedNames.has(name)),
    fc.string({ maxLength: 8 }),
  ),
  { maxLength: 2, selector: ([name]) => name },
)

// A cursor is opaque: the valid ones are those `Link` hands out, which the valid-listing
// property follows; any other text is invalid.
const validListQuery = fc.record({
  limit: fc.option(validText(limitSchema, resolve), { nil: undefined }),
  status: fc.option(validText(statusSchema, resolve), { nil: undefined }),
  unknown: unknownParameters,
})

const invalidParameter: fc.Arbitrary<Query> = fc.oneof(
  invalidText(limitSchema, resolve).map((text): Query => [["limit", text]]),
  invalidText(statusSchema, resolve).map((text): Query => [["status", text]]),
  fc.string().map((text): Query => [["cursor", text]]),
  fc
    .oneof(
      fc.tuple(
        fc.constant("limit"),
        validText(limitSchema, resolve),
        validText(limitSchema, resolve),
      ),
      fc.tuple(
        fc.constant("status"),
        validText(statusSchema, resolve),
        validText(statusSchema, resolve),
      ),
    )
    .map(([name, first, second]): Query => [
      [name, first],
      [name, second],
    ]),
)

const invalidListing: fc.Arbitrary<Case> = fc
  .tuple(invalidParameter, unknownParameters)
  .map(([invalid, unknown]) => ({
    request: get(`/pets${queryString([...invalid, ...unknown])}`),
    expected: 400,
  }))

const jsonTypes = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "application/json;charset=UTF-8",
)
const validNewPet = validValue(newPetSchema, resolve)
const validCreation = fc.record({ pet: validNewPet, contentType: jsonTypes })

const parses = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const json = { "Content-Type": "application/json" }
const invalidCreation: fc.Arbitrary<Case> = fc.oneof(
  {
    weight: 4,
    arbitrary: invalidValue(newPetSchema, resolve).map((body) => ({
      request: postBody(jsonText(body), json),
      expected: 400,
    })),
  },
  fc
    .string({ unit: "binary", maxLength: 40 })
    .filter((text) => !parses(text))
    .map((text) => ({ request: postBody(text, json), expected: 400 })),
  fc.constant({ request: postBody("", json), expected: 400 }),
  fc
    .tuple(
      validNewPet,
      fc.constantFrom(
        "text/plain",
        "application/xml",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/json; charset=iso-8859-1",
        "application/json; charset=utf-16",
      ),
    )
    .map(([pet, type]) => ({
      request: postBody(jsonText(pet), { "Content-Type": type }),
      expected: 415,
    })),
  fc.tuple(validNewPet, fc.constantFrom("gzip", "deflate", "br")).map(([pet, encoding]) => ({
    request: postBody(jsonText(pet), { ...json, "Content-Encoding": encoding }),
    expected: 415,
  })),
  validNewPet.map((pet) => ({
    request: postBody(new TextEncoder().encode(jsonText(pet)), {}),
    expected: 415,
  })),
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 4096 }).map((extra) => ({
      request: postBody(jsonText({ name: "x".repeat(maxBodyBytes + extra), categoryId: 1 }), json),
      expected: 413,
    })),
  },
)

/** `.` and `..` are path segments a URL resolves away, so they never reach `/pets/{petId}`. */
const pathSegment = (text: string) => text !== "" && text !== "." && text !== ".."

const invalidLookup: fc.Arbitrary<Case> = invalidText(petIdSchema, resolve)
  .filter(pathSegment)
  .map((text) => ({ request: get(`/pets/${encodeURIComponent(text)}`), expected: 400 }))

/**
 * Requests to an operation built from the document alone: its path and query parameters drawn
 * from their schemas, and a body valid or not.
 */
const requestsFrom = ({
  path,
  method,
  operation,
}: DocumentedOperation): fc.Arbitrary<ContractRequest> => {
  const parameters = operation.parameters ?? []
  // Valid values only: a schema such as the cursor's (any string) has no invalid text to draw.
  const text = (schema: JsonSchema) => validText(schema, resolve)
  const pathValues = fc.tuple(
    ...parameters
      .filter((parameter) => parameter.in === "path")
      .map((parameter) => text(parameter.schema).map((value) => [parameter.name, value] as const)),
  )
  const queryValues = fc.tuple(
    ...parameters
      .filter((parameter) => parameter.in === "query")
      .map((parameter) =>
        fc.option(
          text(parameter.schema).map((value) => [parameter.name, value] as const),
          {
            nil: undefined,
          },
        ),
      ),
  )
  const bodySchema = operation.requestBody?.content["application/json"]?.schema
  const body =
    bodySchema === undefined
      ? fc.constant(undefined)
      : fc.oneof(validValue(bodySchema, resolve), invalidValue(bodySchema, resolve)).map(jsonText)
  return fc.record({ pathValues, queryValues, body }).map(({ pathValues, queryValues, body }) => {
    const concretePath = pathValues.reduce(
      (filled, [name, value]) => filled.replace(`{${name}}`, encodeURIComponent(value)),
      path,
    )
    const query = queryValues.flatMap((entry) => (entry === undefined ? [] : [entry]))
    return {
      method: method.toUpperCase(),
      path: `${concretePath}${queryString(query)}`,
      headers: body === undefined ? {} : json,
      ...(body === undefined ? {} : { body }),
    }
  })
}

describe("the contract, property-based", () => {
  let server: TestServer
  /** Every pet the server has stored, by id: each 201 adds one. */
  const stored = new Map<number, PetBody>()

  const send = async (
    operation: DocumentedOperation,
    request: ContractRequest,
    /** The `Authorization` header to send; none when `null`. */
    authorization: string | null = `Bearer ${apiKey}`,
  ): Promise<Answer> => {
    const headers = new Headers(request.headers)
    if (authorization !== null) headers.set("Authorization", authorization)
    const response = await fetch(`${server.origin}${basePath}${request.path}`, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
    })
    return contract.check(operation, request, response)
  }

  const readPet = Schema.decodeUnknownSync(PetBody)
  const readPets = Schema.decodeUnknownSync(Schema.Array(PetBody))
  const sentFields = Schema.decodeUnknownSync(Schema.encodedSchema(NewPet))

  before(async () => {
    server = await startServer()
    for (const pet of fc.sample(validNewPet, { numRuns: 30, seed: 1 })) {
      const answer = await send(createPet, postBody(jsonText(pet), json))
      assert.equal(answer.status, 201)
      const created = readPet(answer.body)
      stored.set(created.id, created)
    }
  })
  after(() => server.close())

  describe("listPets", () => {
    it("accepts every valid query: at most limit pets, only of the status asked, next links that continue", async () => {
      await fc.assert(
        fc.asyncProperty(validListQuery, async ({ limit, status, unknown }) => {
          const query: Query = [
            ...(limit === undefined ? [] : [["limit", limit] as const]),
            ...(status === undefined ? [] : [["status", status] as const]),
            ...unknown,
          ]
          let request = get(`/pets${queryString(query)}`)
          let previous: number | undefined
          for (let page = 0; page < 2; page++) {
            const answer = await send(listPets, request)
            assert.equal(answer.status, 200)
            const pets = readPets(answer.body)
            assert.ok(pets.length <= Number(limit ?? defaultLimit))
            assert.ok(pets.every((pet) => status === undefined || pet.status === status))
            assert.ok(previous === undefined || (pets[0]?.id ?? Infinity) > previous)
            previous = pets.at(-1)?.id
            const next = /^<([^>]+)>/.exec(answer.headers.get("link") ?? "")?.[1]
            if (next === undefined) break
            assert.ok(next.startsWith(`${basePath}/`), next)
            request = get(next.slice(basePath.length))
          }
        }),
        { numRuns: runs.valid },
      )
    })

    it("refuses an invalid, repeated or forged query parameter with 400", async () => {
      await fc.assert(
        fc.asyncProperty(invalidListing, async ({ request, expected }) => {
          assert.equal((await send(listPets, request)).status, expected)
        }),
        { numRuns: runs.invalid },
      )
    })
  })

  describe("createPet", () => {
    it("accepts every valid NewPet: 201, the fields sent plus an id, and its Location", async () => {
      await fc.assert(
        fc.asyncProperty(validCreation, async ({ pet, contentType }) => {
          const answer = await send(
            createPet,
            postBody(jsonText(pet), { "Content-Type": contentType }),
          )
          assert.equal(answer.status, 201)
          const created = readPet(answer.body)
          assert.deepEqual(created, { id: created.id, ...sentFields(pet) })
          assert.equal(answer.headers.get("location"), `${basePath}/pets/${created.id}`)
          assert.ok(!stored.has(created.id), `id ${created.id} was given twice`)
          stored.set(created.id, created)
        }),
        { numRuns: runs.valid },
      )
    })

    it("refuses invalid bodies with 400, other media types with 415 and large bodies with 413", async () => {
      await fc.assert(
        fc.asyncProperty(invalidCreation, async ({ request, expected }) => {
          assert.equal((await send(createPet, request)).status, expected)
        }),
        { numRuns: runs.invalid },
      )
    })
  })

  describe("getPet", () => {
    const storedId = fc.nat().map((index) => String([...stored.keys()][index % stored.size]))

    it("answers a valid id with the pet stored under it, or 404 when there is none", async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(storedId, validText(petIdSchema, resolve)), async (id) => {
          const answer = await send(getPet, get(`/pets/${id}`))
          const pet = stored.get(Number(id))
          assert.equal(answer.status, pet === undefined ? 404 : 200)
          if (pet !== undefined) assert.deepEqual(readPet(answer.body), pet)
        }),
        { numRuns: runs.valid },
      )
    })

    it("refuses an id that is not a positive safe integer with 400", async () => {
      await fc.assert(
        fc.asyncProperty(invalidLookup, async ({ request, expected }) => {
          assert.equal((await send(getPet, request)).status, expected)
        }),
        { numRuns: runs.invalid },
      )
    })
  })

  describe("without a valid key", () => {
    const wrongAuthorization = fc.oneof(
      fc.constant(null),
      fc.constantFrom(
        "",
        "Basic dGVzdDp0ZXN0",
        "Bearer",
        "Bearer ",
        apiKey,
        `Token ${apiKey}`,
        `Bearer ${apiKey} extra`,
        `Bearer ${apiKey.slice(1)}`,
        `Bearer ${apiKey.toUpperCase()}`,
      ),
      fc
        .string({ unit: "grapheme-ascii", minLength: 1, maxLength: 40 })
        .map((token) => `Bearer ${token}`)
        .filter((header) => !new RegExp(`^Bearer +${apiKey} *$`, "i").test(header.trim())),
    )
    // Each operation of the table, with requests built from its own parameter and body schemas.
    const requests = operationsOf(document).map(
      (operation) => [operation, requestsFrom(operation)] as const,
    )

    it("covers every operation the server declares", () => {
      assert.deepEqual(
        requests.map(([operation]) => operation.operation.operationId),
        petOperations.map((operation) => operation.id),
      )
    })

    for (const [operation, request] of requests) {
      it(`${operation.operation.operationId} answers 401 with a challenge, whatever the request`, async () => {
        await fc.assert(
          fc.asyncProperty(request, wrongAuthorization, async (unauthorized, authorization) => {
            const answer = await send(operation, unauthorized, authorization)
            assert.equal(answer.status, 401)
          }),
          { numRuns: runs.unauthorized },
        )
      })
    }
  })

  describe("methods the document does not list", () => {
    for (const [path, item] of Object.entries(document.paths)) {
      const documented = operationsOf(document).filter((entry) => entry.path === path)
      const allowed = new Set(Object.keys(item).map((method) => method.toUpperCase()))
      if (allowed.has("GET")) allowed.add("HEAD")
      allowed.add("OPTIONS")
      const others = ["PUT", "PATCH", "DELETE", "POST"].filter((method) => !allowed.has(method))
      const concrete = validText(petIdSchema, resolve).map((id) => path.replace("{petId}", id))

      it(`${path} answers ${others.join(", ")} with 405 and Allow`, async () => {
        await fc.assert(
          fc.asyncProperty(
            concrete,
            fc.constantFrom(...others),
            fc.option(validNewPet, { nil: undefined }),
            async (concretePath, method, body) => {
              const request: ContractRequest = {
                method,
                path: concretePath,
                headers: body === undefined ? {} : json,
                ...(body === undefined ? {} : { body: jsonText(body) }),
              }
              for (const operation of documented) {
                const answer = await send(operation, request)
                assert.equal(answer.status, 405)
                const allow = (answer.headers.get("allow") ?? "").split(", ")
                assert.deepEqual(new Set(allow), allowed)
              }
            },
          ),
          { numRuns: runs.methods },
        )
      })
    }
  })

  describe("when storage fails", () => {
    const requests: ReadonlyArray<[DocumentedOperation, ContractRequest]> = [
      [listPets, get("/pets")],
      [createPet, postBody(jsonText({ name: "Rex", categoryId: 1 }), json)],
      [getPet, get("/pets/1")],
    ]

    for (const [expected, layer] of [
      [503, failingRepository(Effect.fail(new StorageUnavailable({ cause: "the disk is full" })))],
      [500, failingRepository(Effect.die(new Error("a bug in the adapter")))],
    ] as const) {
      it(`every operation answers ${expected} as documented`, async () => {
        const failing = await startServer({ layer })
        try {
          for (const [operation, request] of requests) {
            const response = await fetch(`${failing.origin}${basePath}${request.path}`, {
              method: request.method,
              headers: { ...request.headers, Authorization: `Bearer ${apiKey}` },
              ...(request.body === undefined ? {} : { body: request.body }),
            })
            const answer = await contract.check(operation, request, response, "expected")
            assert.equal(answer.status, expected, operation.operation.operationId)
          }
        } finally {
          await failing.close()
        }
      })
    }
  })
})
