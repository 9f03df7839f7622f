import fc from "fast-check"

/**
 * Arbitraries for the fuzz suite: HTTP/1.1 requests as bytes on the wire, mostly wrong in one
 * way or several (method, target, version, headers, framing, body), plus the valid ones they
 * are mutations of.
 */

type Header = readonly [name: string, value: string]

/** How the body is framed; some framings are invalid, two leave the request unfinished. */
export type Framing =
  | "length"
  | "length-short"
  | "length-long"
  | "none"
  | "chunked"
  | "chunked-unterminated"
  | "chunked-and-length"
  | "chunked-bad-size"
  | "te-unknown"
  | "te-chunked-not-last"
  | "length-duplicate"
  | "length-conflicting"
  | "length-invalid"
  | "length-huge"

/** Framings after which the server must wait for more bytes: it can only time the request out. */
const unfinishedFramings: ReadonlyArray<Framing> = ["length-long", "chunked-unterminated"]

export interface MalformedRequest {
  readonly method: string
  readonly target: string
  readonly version: string
  readonly headers: ReadonlyArray<Header>
  readonly framing: Framing
  readonly body: Buffer
  /** Where the bytes are cut; `undefined` sends them all. */
  readonly cutAt?: number
}

const latin1 = (text: string) => Buffer.from(text, "utf8").toString("latin1")
const bytes = (maxLength: number) =>
  fc.uint8Array({ maxLength }).map((array) => Buffer.from(array).toString("latin1"))

const tokenChars = "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const token = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...tokenChars), minLength: 1, maxLength })

const method = fc.oneof(
  { weight: 24, arbitrary: fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD") },
  {
    weight: 2,
    arbitrary: fc.constantFrom("OPTIONS", "TRACE", "CONNECT", "PRI", "get", "QUERY", "PROPFIND"),
  },
  { weight: 1, arbitrary: token(12) },
  { weight: 1, arbitrary: bytes(12) },
)

const knownPaths = [
  "/v1/pets",
  "/v1/pets/1",
  "/v1/pets/9007199254740991",
  "/healthz",
  "/readyz",
  "/metrics",
  "/v1/openapi.json",
  "/docs",
  "/docs/",
  "/v1",
  "/",
]

const hostileSegments = [
  ".",
  "..",
  "%2e",
  "%2E%2e",
  "%2f",
  "%5c",
  "%00",
  "%zz",
  "%",
  "%u0041",
  "%C0%AE",
  "%E2%82%AC",
  "%FF",
  "0",
  "-1",
  "1e3",
  "0x10",
  "9007199254740992",
  "99999999999999999999999",
  "1.0",
  " 1",
  "",
  "~",
  "@",
  ";a=b",
  latin1("€"),
  latin1("pets\u0301"),
]
const urlChars =
  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@%/?#[]"
const segment = fc.oneof(
  fc.constantFrom(...hostileSegments),
  fc.string({ unit: fc.constantFrom(...urlChars), maxLength: 16 }),
)

const path = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom(...knownPaths) },
  {
    weight: 4,
    arbitrary: fc.array(segment, { maxLength: 6 }).map((parts) => `/${parts.join("/")}`),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom(...knownPaths), segment, fc.constantFrom("/", "//", "/./", "/../"))
      .map(([known, part, joint]) => `${known}${joint}${part}`),
  },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1_000, max: 20_000 })
      .map((length) => `/v1/pets/${"a".repeat(length)}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "*",
      "http://127.0.0.1/v1/pets",
      "//v1/pets",
      "v1/pets",
      "",
      "127.0.0.1:80",
    ),
  },
  { weight: 1, arbitrary: bytes(40).map((text) => `/${text}`) },
)

const queryValue = fc.oneof(
  fc.constantFrom("1", "0", "100", "101", "-1", "1.5", "1e2", "abc", "available", "sold", "SOLD"),
  fc.constantFrom("%zz", "%00", "", "%E0%A4%A", "eyJ9", "a".repeat(3_000), "1&limit=2"),
  fc.string({ unit: fc.constantFrom(...urlChars), maxLength: 20 }),
)
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant("") },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.constantFrom(
            "limit",
            "status",
            "cursor",
            "x",
            "__proto__",
            "limit[]",
            "",
            "constructor",
          ),
          queryValue,
        ),
        { minLength: 1, maxLength: 4 },
      )
      .map((pairs) => `?${pairs.map(([key, value]) => `${key}=${value}`).join("&")}`),
  },
  { weight: 1, arbitrary: fc.constantFrom("?", "??", "?&&", "?=", "?limit", "#fragment") },
)

const version = fc.oneof(
  { weight: 40, arbitrary: fc.constant("HTTP/1.1") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "HTTP/1.0",
      "HTTP/2.0",
      "HTTP/0.9",
      "HTTP/1.2",
      "http/1.1",
      "HTTP/1.1 x",
      "",
    ),
  },
)

/** The Host line: mostly one, sometimes none, two, empty or odd. */
const host = fc.oneof(
  { weight: 24, arbitrary: fc.constant<ReadonlyArray<Header>>([["Host", "127.0.0.1"]]) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<ReadonlyArray<Header>>(
      [],
      [
        ["Host", "a"],
        ["Host", "b"],
      ],
      [["Host", ""]],
      [["host", "127.0.0.1:1"]],
      [["Host", "[::1"]],
    ),
  },
  { weight: 1, arbitrary: bytes(20).map((value): ReadonlyArray<Header> => [["Host", value]]) },
)

const authorization = (key: string) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constant<ReadonlyArray<Header>>([["Authorization", `Bearer ${key}`]]),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom<ReadonlyArray<Header>>(
        [],
        [["Authorization", "Bearer not-the-key"]],
        [["Authorization", "Bearer"]],
        [["Authorization", `bearer ${key}`]],
        [["Authorization", `Bearer  ${key}`]],
        [["Authorization", "Basic dXNlcjpwYXNz"]],
        [
          ["Authorization", `Bearer ${key}`],
          ["Authorization", `Bearer ${key}`],
        ],
        [["Authorization", `Bearer ${key}=`]],
        [["Authorization", `Bearer pst_${"A".repeat(43)}`]],
      ),
    },
    {
      weight: 1,
      arbitrary: bytes(60).map((value): ReadonlyArray<Header> => [["Authorization", value]]),
    },
  )

const contentType = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<ReadonlyArray<Header>>([["Content-Type", "application/json"]]),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<ReadonlyArray<Header>>(
      [],
      [["Content-Type", "application/json; charset=latin1"]],
      [["Content-Type", 'application/json; charset="UTF-8"']],
      [["Content-Type", "text/plain"]],
      [["Content-Type", "application/problem+json"]],
      [["Content-Type", "multipart/form-data; boundary=x"]],
      [["Content-Type", ""]],
      [["Content-Type", "application/json;;;"]],
      [
        ["Content-Type", "application/json"],
        ["Content-Type", "text/plain"],
      ],
      [
        ["Content-Type", "application/json"],
        ["Content-Encoding", "gzip"],
      ],
    ),
  },
)

const expect = fc.oneof(
  { weight: 6, arbitrary: fc.constant<ReadonlyArray<Header>>([]) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom("100-continue", "100-Continue", "teapot", "", "200-ok", "100-continue, x")
      .map((value): ReadonlyArray<Header> => [["Expect", value]]),
  },
)

const headerName = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "Idempotency-Key",
      "X-Request-Id",
      "Connection",
      "Accept",
      "Accept-Encoding",
      "X-Forwarded-For",
      "Origin",
      "Access-Control-Request-Method",
      "Range",
      "If-None-Match",
      "Cookie",
      "Upgrade",
      "Trailer",
      "Keep-Alive",
      "TE",
    ),
  },
  { weight: 4, arbitrary: token(20) },
  { weight: 1, arbitrary: fc.constantFrom("Bad Name", "Bad:Name", "", "X\u0000", latin1("Ünï")) },
)
const headerValue = fc.oneof(
  { weight: 8, arbitrary: fc.string({ maxLength: 40 }).map(latin1) },
  { weight: 1, arbitrary: bytes(40) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "close",
      "keep-alive",
      "upgrade",
      "websocket",
      "h2c",
      "gzip, deflate",
    ),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 8_000, max: 20_000 }).map((length) => "x".repeat(length)),
  },
)
const otherHeaders = fc.oneof(
  { weight: 6, arbitrary: fc.constant([]) },
  { weight: 6, arbitrary: fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 50, max: 2_200 })
      .map((count) => Array.from({ length: count }, (_, index): Header => [`X-H${index}`, "v"])),
  },
)

const validPet = fc.record({
  name: fc.string({ minLength: 1, maxLength: 30 }),
  categoryId: fc.integer(),
  status: fc.constantFrom("available", "pending", "sold"),
})

const nested = (depth: number, open: string, close: string, inner: string) =>
  `${open.repeat(depth)}${inner}${close.repeat(depth)}`

/** JSON a hostile client sends: deep, huge, prototype-polluting, duplicated, odd Unicode. */
const hostileJson = fc.oneof(
  fc
    .integer({ min: 1, max: 100_000 })
    .map((depth) => `{"name":${nested(depth, "[", "]", "1")},"categoryId":1}`),
  fc.integer({ min: 1, max: 100_000 }).map((depth) => nested(depth, '{"a":', "}", "1")),
  fc.integer({ min: 1, max: 100 }).map((depth) => nested(depth, "[", "]", "")),
  fc.constantFrom(
    '{"name":"x","categoryId":1e400}',
    '{"name":"x","categoryId":-1e400}',
    '{"name":"x","categoryId":123456789012345678901234567890}',
    '{"name":"x","categoryId":9007199254740993}',
    '{"name":"x","categoryId":-0}',
    '{"name":"x","categoryId":1.0}',
    '{"name":"x","categoryId":1e2}',
    '{"name":"x","categoryId":0.1e1}',
    '{"__proto__":{"name":"x","categoryId":1},"name":"y","categoryId":2}',
    '{"name":"x","categoryId":1,"__proto__":{"status":"sold"}}',
    '{"constructor":{"prototype":{"polluted":true}},"name":"x","categoryId":1}',
    '{"name":"a","name":"b","categoryId":1,"categoryId":"1"}',
    '{"name":"\\ud800","categoryId":1}',
    '{"name":"\\udfff\\ud800","categoryId":1}',
    '{"name":"\\u0000","categoryId":1}',
    '{"name":"\\u202e\\u0301\\ufeff","categoryId":1}',
    '\ufeff{"name":"bom","categoryId":1}',
    '{"name":"x","categoryId":1,"status":"SOLD"}',
    '{"name":"x","categoryId":1,"status":null}',
    '{"name":"x","categoryId":1,"id":5}',
    '{"name":"x","categoryId":"1"}',
    '{"name":"x"',
    "[]",
    "null",
    "true",
    '"a string"',
    "1e999999",
    "{}",
    "{",
    "}",
    "\u0000",
  ),
  fc
    .integer({ min: 250, max: 400 })
    .map((length) => `{"name":"${"😀".repeat(length)}","categoryId":1}`),
  fc
    .integer({ min: 1, max: 3 })
    .map((times) => `{"name":"${"a".repeat(times * 400_000)}","categoryId":1}`),
)

const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant(Buffer.alloc(0)) },
  { weight: 3, arbitrary: validPet.map((pet) => Buffer.from(JSON.stringify(pet))) },
  { weight: 4, arbitrary: hostileJson.map((text) => Buffer.from(text)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 2_048 }).map((array) => Buffer.from(array)) },
  { weight: 1, arbitrary: fc.json().map((text) => Buffer.from(text)) },
)

const framing = (allowUnfinished: boolean) =>
  fc.oneof(
    { weight: 24, arbitrary: fc.constant<Framing>("length") },
    {
      weight: 4,
      arbitrary: fc.constantFrom<Framing>(
        "length-short",
        "none",
        "chunked",
        "chunked-and-length",
        "chunked-bad-size",
        "te-unknown",
        "te-chunked-not-last",
        "length-duplicate",
        "length-conflicting",
        "length-invalid",
        "length-huge",
      ),
    },
    { weight: allowUnfinished ? 2 : 0, arbitrary: fc.constantFrom(...unfinishedFramings) },
  )

export interface RequestOptions {
  /** The valid API key, which most requests carry. */
  readonly key: string
  /** Whether a request may be unfinished: cut short, or framed to announce more than it sends. */
  readonly unfinished: boolean
}

/** Mostly `valid`, sometimes `hostile`: one broken part at a time gets further into the app. */
const mostly = <T>(valid: T, hostile: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 5, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: hostile })

const noHeaders: ReadonlyArray<Header> = []

/** Where a request's parts come from; each kind of request aims at a different layer. */
const requestOf = (
  options: RequestOptions,
  parts: {
    readonly method: fc.Arbitrary<string>
    readonly target: fc.Arbitrary<string>
    readonly version: fc.Arbitrary<string>
    readonly headers: ReadonlyArray<fc.Arbitrary<ReadonlyArray<Header>>>
  },
): fc.Arbitrary<MalformedRequest> =>
  fc
    .record({
      method: parts.method,
      target: parts.target,
      version: parts.version,
      headers: fc.tuple(...parts.headers).map((groups) => groups.flat()),
      framing: framing(options.unfinished),
      body,
      cutAt: options.unfinished ? fc.option(fc.nat(), { nil: undefined }) : fc.constant(undefined),
      reversed: fc.boolean(),
    })
    .map(({ headers, reversed, cutAt, ...request }) => ({
      ...request,
      headers: reversed ? [...headers].reverse() : headers,
      ...(cutAt === undefined ? {} : { cutAt }),
    }))

const idempotencyKey = fc.option(
  fc.string({ maxLength: 300 }).map((key): ReadonlyArray<Header> => [["Idempotency-Key", key]]),
  { nil: noHeaders },
)

/**
 * Requests as a hostile or broken client sends them: anything at all; creates whose body,
 * framing or media type is wrong; reads whose path or query is.
 */
export const malformedRequest = (options: RequestOptions): fc.Arbitrary<MalformedRequest> =>
  fc.oneof(
    requestOf(options, {
      method,
      target: fc.tuple(path, query).map(([pathPart, queryPart]) => `${pathPart}${queryPart}`),
      version,
      headers: [host, authorization(options.key), contentType, expect, otherHeaders],
    }),
    requestOf(options, {
      method: mostly("POST", method),
      target: mostly("/v1/pets", path),
      version: mostly("HTTP/1.1", version),
      headers: [
        mostly([["Host", "127.0.0.1"]], host),
        mostly([["Authorization", `Bearer ${options.key}`]], authorization(options.key)),
        contentType,
        mostly(noHeaders, expect),
        idempotencyKey,
        mostly(noHeaders, otherHeaders),
      ],
    }),
    requestOf(options, {
      method: mostly("GET", method),
      target: fc
        .tuple(
          fc.oneof(
            fc.constant("/v1/pets"),
            segment.map((part) => `/v1/pets/${part}`),
          ),
          query,
        )
        .map(([pathPart, queryPart]) => `${pathPart}${queryPart}`),
      version: mostly("HTTP/1.1", version),
      headers: [
        mostly([["Host", "127.0.0.1"]], host),
        mostly([["Authorization", `Bearer ${options.key}`]], authorization(options.key)),
        mostly(noHeaders, otherHeaders),
      ],
    }),
  )

const chunked = (body: Buffer, terminated: boolean, size = body.length.toString(16)) =>
  Buffer.concat([
    Buffer.from(body.length === 0 ? "" : `${size}\r\n`),
    body,
    Buffer.from(body.length === 0 ? "" : "\r\n"),
    Buffer.from(terminated ? "0\r\n\r\n" : ""),
  ])

/** The framing headers and the body as they go on the wire. */
const framed = (request: MalformedRequest): [ReadonlyArray<Header>, Buffer] => {
  const { body } = request
  const length = String(body.length)
  switch (request.framing) {
    case "length":
      return [[["Content-Length", length]], body]
    case "length-short":
      return [[["Content-Length", String(Math.max(0, body.length - 1))]], body]
    case "length-long":
      return [[["Content-Length", String(body.length + 10)]], body]
    case "none":
      return [[], body]
    case "chunked":
      return [[["Transfer-Encoding", "chunked"]], chunked(body, true)]
    case "chunked-unterminated":
      return [[["Transfer-Encoding", "chunked"]], chunked(body, false)]
    case "chunked-and-length":
      return [
        [
          ["Transfer-Encoding", "chunked"],
          ["Content-Length", length],
        ],
        chunked(body, true),
      ]
    case "chunked-bad-size":
      return [[["Transfer-Encoding", "chunked"]], chunked(body, true, "zz")]
    case "te-unknown":
      return [[["Transfer-Encoding", "gzip"]], body]
    case "te-chunked-not-last":
      return [[["Transfer-Encoding", "chunked, gzip"]], chunked(body, true)]
    case "length-duplicate":
      return [
        [
          ["Content-Length", length],
          ["Content-Length", length],
        ],
        body,
      ]
    case "length-conflicting":
      return [
        [
          ["Content-Length", length],
          ["Content-Length", String(body.length + 1)],
        ],
        body,
      ]
    case "length-invalid":
      return [[["Content-Length", `${length}x`]], body]
    case "length-huge":
      return [[["Content-Length", "999999999999999"]], body]
  }
}

/** The request's bytes, cut where it says. */
export const encodeRequest = (request: MalformedRequest): Buffer => {
  const [framingHeaders, payload] = framed(request)
  const lines = [...request.headers, ...framingHeaders].map(([name, value]) => `${name}: ${value}`)
  const requestLine = [request.method, request.target, request.version].join(" ")
  const whole = Buffer.concat([
    Buffer.from(`${requestLine}\r\n${lines.map((line) => `${line}\r\n`).join("")}\r\n`, "latin1"),
    payload,
  ])
  return request.cutAt === undefined ? whole : whole.subarray(0, request.cutAt % (whole.length + 1))
}

/** The start of the request as text, for a failure message. */
export const describeRequest = (request: MalformedRequest): string => {
  const text = encodeRequest(request).toString("latin1")
  return JSON.stringify(text.length > 600 ? `${text.slice(0, 600)}… (${text.length} bytes)` : text)
}
