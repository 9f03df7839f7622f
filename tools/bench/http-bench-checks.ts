/**
 * What http-bench.ts checks before it measures: that every target answers each scenario's
 * request as the service should (status, JSON, page size, headers), and where the baselines'
 * answers differ from the service's for a set of probes (statuses, error codes, headers,
 * success bodies). A scenario answered wrongly stops the run; a probe that differs is reported.
 */
import { Schema } from "effect"
import type { LoadRequest } from "./load-plan.js"
import type { Server } from "./processes.js"

interface ScenarioLike {
  readonly title: string
  readonly request: LoadRequest
  readonly expectedStatus: number
}

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

const send = async (origin: string, request: LoadRequest): Promise<Answer> => {
  const response = await fetch(`${origin}${request.path}`, {
    method: request.method,
    headers: request.headers,
    ...(request.body === undefined ? {} : { body: request.body }),
  })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const PetJson = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  categoryId: Schema.Number,
  status: Schema.optional(Schema.String),
})
const decodePets = Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(PetJson)))
const decodePet = Schema.decodeUnknownEither(Schema.parseJson(PetJson))
const ErrorJson = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  status: Schema.Number,
})
const decodeError = Schema.decodeUnknownEither(Schema.parseJson(ErrorJson))

const deprecation = {
  deprecation: "@1795305600",
  sunset: "Thu, 05 Dec 2030 00:00:00 GMT",
  link: '</v1/pets>; rel="successor-version"',
}

/** What is wrong with a target's answer to a scenario's request; empty when nothing is. */
export const checkResponse = async (
  origin: string,
  scenario: ScenarioLike,
  knownId: number,
): Promise<Array<string>> => {
  const answer = await send(origin, scenario.request)
  const problems: Array<string> = []
  if (answer.status !== scenario.expectedStatus)
    problems.push(`status ${answer.status}, expected ${scenario.expectedStatus}: ${answer.text}`)
  if (!(answer.headers.get("content-type") ?? "").startsWith("application/json"))
    problems.push(`Content-Type ${answer.headers.get("content-type")}`)
  const { path } = scenario.request
  if (scenario.request.method === "POST") {
    const pet = decodePet(answer.text)
    if (pet._tag === "Left") problems.push(`body is not a pet: ${answer.text}`)
    else if (answer.headers.get("location") !== `/v1/pets/${pet.right.id}`)
      problems.push(`Location ${answer.headers.get("location")}`)
  } else if (path.startsWith("/v1/pets?")) {
    const pets = decodePets(answer.text)
    const query = new URLSearchParams(path.slice(path.indexOf("?") + 1))
    const limit = Number(query.get("limit") ?? "20")
    const status = query.get("status")
    if (pets._tag === "Left") problems.push(`body is not an array of pets: ${answer.text}`)
    else {
      if (pets.right.length !== limit) problems.push(`${pets.right.length} pets, expected ${limit}`)
      if (status !== null && pets.right.some((pet) => pet.status !== status))
        problems.push(`a pet whose status is not ${status}`)
      const ids = pets.right.map((pet) => pet.id)
      if (ids.some((id, i) => i > 0 && id <= (ids[i - 1] ?? 0))) problems.push("ids not ascending")
    }
    if (!/<\/v1\/pets\?[^>]*cursor=[^>]+>; rel="next"/.test(answer.headers.get("link") ?? ""))
      problems.push(`no rel="next" Link: ${answer.headers.get("link")}`)
  } else {
    const pet = decodePet(answer.text)
    if (pet._tag === "Left" || pet.right.id !== knownId)
      problems.push(`body is not pet ${knownId}: ${answer.text}`)
    for (const [name, value] of Object.entries(deprecation))
      if (answer.headers.get(name) !== value)
        problems.push(`${name}: ${answer.headers.get(name)}, expected ${value}`)
  }
  return problems
}

export interface Mismatch {
  readonly target: string
  readonly request: string
  readonly difference: string
}

interface Probe {
  readonly label: string
  readonly request: LoadRequest
}

const comparedHeaders = [
  "content-type",
  "www-authenticate",
  "deprecation",
  "sunset",
  "link",
  "location",
  "cache-control",
]

const probes = (key: string): ReadonlyArray<Probe> => {
  const auth = { Authorization: `Bearer ${key}` }
  const json = { ...auth, "Content-Type": "application/json" }
  const get = (path: string, headers: Record<string, string> = auth): Probe => ({
    label: `GET ${path}${headers === auth ? "" : ` (${JSON.stringify(headers)})`}`,
    request: { method: "GET", path, headers },
  })
  const post = (body: string, headers: Record<string, string> = json): Probe => ({
    label: `POST /v1/pets ${body}${headers === json ? "" : ` (${JSON.stringify(headers)})`}`,
    request: { method: "POST", path: "/v1/pets", headers, body },
  })
  return [
    get("/v1/pets", {}),
    get("/v1/pets", { Authorization: "Bearer wrong-key" }),
    get("/v1/pets", { Authorization: "Basic abc" }),
    get("/v1/pets"),
    get("/v1/pets?limit=20"),
    get("/v1/pets?status=sold&limit=100"),
    get("/v1/pets?limit=3&status=pending&cursor=YWZ0ZXI6MTA"),
    get("/v1/pets?limit=0"),
    get("/v1/pets?limit=101"),
    get("/v1/pets?limit=abc"),
    get("/v1/pets?status=lost"),
    get("/v1/pets?cursor=not-a-cursor"),
    get("/v1/pets?limit=1&limit=2"),
    get("/v1/pets/500"),
    get("/v1/pets/999999"),
    get("/v1/pets/abc"),
    get("/v1/pets/0"),
    get("/v1/pets/1", {}),
    get("/v1/nothing"),
    get("/v1/nothing", {}),
    post('{"name":"Rex","categoryId":7,"status":"sold","id":99,"extra":true}'),
    post('{"name":"Rex","categoryId":7}'),
    post('{"name":"","categoryId":"7"}'),
    post('{"categoryId":7}'),
    post('{"name":"Rex","categoryId":1.5,"status":"lost"}'),
    post("[1]"),
    post("{bad json"),
    post('{"name":"Rex","categoryId":7}', { ...auth, "Content-Type": "text/plain" }),
    post('{"name":"","categoryId":"7"}', { "Content-Type": "application/json" }),
  ]
}

const errorCode = (answer: Answer) => {
  const body = decodeError(answer.text)
  return body._tag === "Right" ? body.right.code : undefined
}

/**
 * Sends every probe to the service and to each baseline, in the same order (so that creates get
 * the same ids), and lists where a baseline's answer differs: status, error code, the compared
 * headers, and the body of a success.
 */
export const conformance = async (
  service: Server,
  baselines: ReadonlyArray<Server>,
  key: string,
): Promise<Array<Mismatch>> => {
  const mismatches: Array<Mismatch> = []
  for (const probe of probes(key)) {
    const expected = await send(service.origin, probe.request)
    for (const baseline of baselines) {
      const actual = await send(baseline.origin, probe.request)
      const differ = (difference: string) =>
        mismatches.push({ target: baseline.name, request: probe.label, difference })
      if (actual.status !== expected.status) {
        differ(`status ${actual.status}, service ${expected.status}`)
        continue
      }
      if (errorCode(actual) !== errorCode(expected))
        differ(`code ${errorCode(actual)}, service ${errorCode(expected)}`)
      for (const name of comparedHeaders) {
        const ours = actual.headers.get(name)
        const theirs = expected.headers.get(name)
        if (ours?.toLowerCase() !== theirs?.toLowerCase())
          differ(`${name}: ${ours ?? "(none)"}, service ${theirs ?? "(none)"}`)
      }
      if (expected.status < 300 && actual.text !== expected.text)
        differ(`body ${actual.text.slice(0, 120)}, service ${expected.text.slice(0, 120)}`)
    }
  }
  return mismatches
}
