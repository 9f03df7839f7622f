import {
  defaultLimit,
  Limit,
  type ListPetsQuery,
  NewPet,
  PageCursor,
  Pet,
  PetId,
  PetStatus,
} from "@petstore/core"
import { Schema } from "effect"
import { headerRef, type DeprecationDates } from "./headers.js"
import type { ComponentSchemas } from "./json-schema.js"
import type { DocumentedMethod, Operation, Parameter } from "./openapi-types.js"
import { bodyErrors, commonErrors, errorResponse, jsonContent, withHeaders } from "./responses.js"

export const securitySchemeName = "bearerAuth"

export interface RouteInput {
  readonly basePath: string
  readonly getPetDeprecation: DeprecationDates
  readonly schemas: ComponentSchemas
}

/** One operation of the API, at its path relative to the server URL. */
export interface Route {
  readonly path: string
  readonly method: DocumentedMethod
  readonly operation: Operation
}

const Pets = Schema.Array(Pet).annotations({
  identifier: "Pets",
  description: "A page of animals, in ascending `id` order.",
})

interface QueryParameter {
  readonly schema: Schema.Schema.All
  readonly description: string
}

/** Keyed by the fields of `ListPetsQuery`, so a parameter cannot be added without a description. */
type ListPetsParameters = {
  readonly [Name in keyof typeof ListPetsQuery.fields]: QueryParameter
}

const listPetsParameters: ListPetsParameters = {
  limit: {
    schema: Limit.annotations({ identifier: "Limit", default: defaultLimit }),
    description: `Maximum number of animals returned; ${defaultLimit} when omitted.`,
  },
  status: {
    schema: PetStatus,
    description: "Only animals with this status.",
  },
  cursor: {
    schema: PageCursor,
    description:
      'Where the page starts: the value a previous page\'s `Link: rel="next"` carries. Any other value is refused with 400.',
  },
}

const security = [{ [securitySchemeName]: [] }]

const longDate = (date: Date) =>
  date.toLocaleDateString("en-GB", {
    day: "numeric",
    month: "long",
    year: "numeric",
    timeZone: "UTC",
  })

/** The three operations, with every response the server sends for each. */
export const routeTable = ({
  basePath,
  getPetDeprecation,
  schemas,
}: RouteInput): ReadonlyArray<Route> => {
  const queryParameters: ReadonlyArray<Parameter> = Object.entries(listPetsParameters).map(
    ([name, { schema, description }]) => ({
      name,
      in: "query",
      required: false,
      description,
      schema: schemas.of(schema),
    }),
  )
  const pet = jsonContent(schemas.of(Pet))
  const deprecationHeaders = {
    Deprecation: headerRef("Deprecation"),
    Sunset: headerRef("Sunset"),
    Link: headerRef("SuccessorVersionLink"),
  }
  const getPetResponses = {
    200: { description: "The animal.", content: pet },
    400: errorResponse(400, "`petId` is not a positive integer of at most 2^53 − 1.", [
      "invalid_path_parameter",
    ]),
    401: commonErrors[401],
    404: errorResponse(404, "No animal has this id.", ["pet_not_found"]),
    500: commonErrors[500],
    503: commonErrors[503],
  }

  return [
    {
      path: "/pets",
      method: "get",
      operation: {
        operationId: "listPets",
        summary: "List animals",
        description:
          'Animals in ascending `id` order, at most `limit` of them, only those with `status` when it is given. While more remain, the `Link` header names the next page (`rel="next"`). Query parameters other than these are ignored; one given twice is refused.',
        tags: ["pets"],
        security,
        parameters: queryParameters,
        responses: {
          200: {
            description: "A page of animals.",
            headers: { Link: headerRef("NextPageLink") },
            content: jsonContent(schemas.of(Pets)),
          },
          400: errorResponse(
            400,
            "A query parameter is not valid or is given more than once: `limit` outside 1..100 or not an integer, `status` not one of the values, or a `cursor` this service did not issue.",
            ["invalid_query"],
          ),
          ...commonErrors,
        },
      },
    },
    {
      path: "/pets",
      method: "post",
      operation: {
        operationId: "createPet",
        summary: "Add an animal",
        description: "Stores the animal under a new `id` and answers with it.",
        tags: ["pets"],
        security,
        requestBody: {
          description: "The animal to add. Properties other than these are ignored.",
          required: true,
          content: jsonContent(schemas.of(NewPet, { excessProperties: "ignored" })),
        },
        responses: {
          201: {
            description: "The animal was added: the fields sent, plus the `id` assigned.",
            headers: { Location: headerRef("Location") },
            content: pet,
          },
          400: errorResponse(
            400,
            "The body is missing, is not valid JSON (`invalid_json`), or is not a NewPet (`invalid_body`): a required field is absent or a value is not valid.",
            ["invalid_json", "invalid_body"],
          ),
          ...commonErrors,
          ...bodyErrors,
        },
      },
    },
    {
      path: "/pets/{petId}",
      method: "get",
      operation: {
        operationId: "getPet",
        summary: "Get an animal",
        description: `Deprecated: to be removed on ${longDate(getPetDeprecation.sunset)}. Use \`GET /pets\` with a \`status\` filter instead. Every response to it carries \`Deprecation\`, \`Sunset\` and \`Link: <${basePath}/pets>; rel="successor-version"\`.`,
        tags: ["pets"],
        deprecated: true,
        "x-sunset": getPetDeprecation.sunset.toISOString().slice(0, 10),
        security,
        parameters: [
          {
            name: "petId",
            in: "path",
            required: true,
            description: "The animal's identifier.",
            schema: schemas.of(PetId),
          },
        ],
        responses: {
          ...Object.fromEntries(
            Object.entries(getPetResponses).map(([status, response]) => [
              status,
              withHeaders(response, deprecationHeaders),
            ]),
          ),
          // Only other methods get 405, and the deprecation headers mark GET and HEAD alone.
          405: commonErrors[405],
        },
      },
    },
  ]
}
