import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { createMetrics, type PublicRoutes } from "../src/index.js"
import {
  authorized,
  get,
  hostApp,
  linkOf,
  mounted,
  mountPath,
  petstoreApp,
  post,
  serve,
  type PetstoreApp,
  type Served,
} from "./harness/mount.js"

const rex = JSON.stringify({ name: "Rex", categoryId: 1, status: "available" })
const tom = JSON.stringify({ name: "Tom", categoryId: 2, status: "available" })

/** Every URL a page links by `src` or `href`, resolved against the page's own URL. */
const linkedUrls = (html: string, page: string): ReadonlyArray<URL> =>
  [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((match) => new URL(match[1] ?? "", page))

const serversOf = (document: unknown): unknown =>
  typeof document === "object" && document !== null && "servers" in document
    ? document.servers
    : undefined

/** The URL the docs initializer hands Swagger UI. */
const documentUrlOf = (script: string): string => /\burl: "([^"]*)"/.exec(script)?.[1] ?? ""

describe("the app mounted with koa-mount at /petstore in a host with a body parser", () => {
  let petstore: PetstoreApp
  let served: Served
  const at = (path: string) => `${served.origin}${mountPath}${path}`

  before(async () => {
    petstore = petstoreApp()
    served = await serve(hostApp(mounted(petstore.app)).callback())
  })
  after(async () => {
    await served.close()
    await petstore.dispose()
  })

  it("creates: 201, with Location under the mount path", async () => {
    const created = await post(at("/v1/pets"), rex)
    assert.equal(created.status, 201, created.text)
    assert.equal(created.headers.get("location"), "/petstore/v1/pets/1")
    assert.deepEqual(created.json(), { id: 1, name: "Rex", categoryId: 1, status: "available" })
  })

  it("lists: the next page's Link is under the mount path, and following it gives that page", async () => {
    assert.equal((await post(at("/v1/pets"), tom)).status, 201)
    const first = await get(at("/v1/pets?limit=1"), authorized)
    assert.equal(first.status, 200, first.text)
    assert.deepEqual(first.json(), [{ id: 1, name: "Rex", categoryId: 1, status: "available" }])
    const next = linkOf(first.headers.get("link"))
    assert.equal(next.rel, "next")
    assert.match(next.uri, /^\/petstore\/v1\/pets\?limit=1&cursor=[A-Za-z0-9_-]+$/)
    const second = await get(`${served.origin}${next.uri}`, authorized)
    assert.equal(second.status, 200, second.text)
    assert.deepEqual(second.json(), [{ id: 2, name: "Tom", categoryId: 2, status: "available" }])
  })

  it("fetches one animal, and the deprecated get names its successor under the mount path", async () => {
    const fetched = await get(at("/v1/pets/1"), authorized)
    assert.equal(fetched.status, 200, fetched.text)
    assert.deepEqual(fetched.json(), { id: 1, name: "Rex", categoryId: 1, status: "available" })
    assert.equal(fetched.headers.get("link"), '</petstore/v1/pets>; rel="successor-version"')
    assert.match(fetched.headers.get("deprecation") ?? "", /^@\d+$/)
    // Before the key check too: even a 401 says where to go.
    const refused = await get(at("/v1/pets/1"))
    assert.equal(refused.status, 401)
    assert.equal(refused.headers.get("link"), '</petstore/v1/pets>; rel="successor-version"')
  })

  it("serves the document under the mount path, naming the mount path as its server", async () => {
    const served = await get(at("/v1/openapi.json"))
    assert.equal(served.status, 200, served.text)
    const document = served.json()
    assert.deepEqual(serversOf(document), [{ url: "/petstore/v1", description: "This server" }])
    // What it says of the headers the mounted app sends.
    assert.match(served.text, /"pattern":"\^\/petstore\/v1\/pets\/\[1-9\]\[0-9\]\*\$"/)
    assert.ok(served.text.includes('"const":"</petstore/v1/pets>; rel=\\"successor-version\\""'))
  })

  it("serves the docs page under the mount path, every file it links, and the document it loads", async () => {
    const page = at("/docs")
    const shown = await get(page)
    assert.equal(shown.status, 200, shown.text)
    assert.match(shown.headers.get("content-type") ?? "", /^text\/html/)
    const urls = linkedUrls(shown.text, page)
    assert.ok(urls.length >= 4, `the page links ${urls.length} files`)
    for (const url of urls) {
      assert.equal(url.origin, served.origin, url.href)
      assert.match(url.pathname, /^\/petstore\/docs\/[\w.-]+$/, url.href)
      const file = await get(url.href)
      assert.equal(file.status, 200, url.href)
      assert.ok(file.text.length > 0, url.href)
    }
    const initializer = urls.find((url) => url.pathname === "/petstore/docs/initializer.js")
    assert.ok(initializer !== undefined, "the page loads the initializer")
    const documentUrl = documentUrlOf((await get(initializer.href)).text)
    assert.equal(documentUrl, "/petstore/v1/openapi.json")
    const document = await get(new URL(documentUrl, page).href)
    assert.equal(document.status, 200)
    assert.deepEqual(serversOf(document.json()), [
      { url: "/petstore/v1", description: "This server" },
    ])
  })

  it("answers /petstore/healthz and /petstore/readyz; the host's own /healthz and /docs stay the host's", async () => {
    const health = await get(at("/healthz"))
    assert.equal(health.status, 200)
    assert.deepEqual(health.json(), { status: "ok" })
    const ready = await get(at("/readyz"))
    assert.equal(ready.status, 200)
    assert.deepEqual(ready.json(), { status: "ready" })
    assert.equal((await get(`${served.origin}/healthz`)).text, "the host's own health")
    assert.equal((await get(`${served.origin}/docs`)).text, "the host's own docs")
  })

  it("names paths as the client sent them: an unknown one under the mount path is 404", async () => {
    const unknown = await get(at("/nothing-here"), authorized)
    assert.equal(unknown.status, 404)
    assert.deepEqual(unknown.json(), {
      code: "not_found",
      message: "nothing is at /petstore/nothing-here",
      status: 404,
    })
  })

  it("refuses a target with a fragment itself, as unmounted: 400 with the Error body", async () => {
    const answer = await rawRequest(
      served.origin,
      `GET ${mountPath}/v1/pets#x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 400 /)
    assert.match(
      answer,
      /\r\n\r\n\{"code":"bad_request","message":"the request target has a fragment/,
    )
  })

  it("logs each request's route under the mount path", () => {
    const routes = new Set(petstore.logged.map((line) => line.route))
    for (const route of [
      "/petstore/v1/pets",
      "/petstore/v1/pets/:petId",
      "/petstore/v1/openapi.json",
      "/petstore/docs",
      "/petstore/healthz",
    ]) {
      assert.ok(routes.has(route), `${route} among ${[...routes].join(", ")}`)
    }
    assert.ok(!routes.has("/v1/pets"), "a route logged without the mount path")
  })
})

describe("the same app unmounted answers as before", () => {
  let petstore: PetstoreApp
  let served: Served
  const at = (path: string) => `${served.origin}${path}`

  before(async () => {
    petstore = petstoreApp()
    served = await serve(petstore.app.callback())
  })
  after(async () => {
    await served.close()
    await petstore.dispose()
  })

  it("writes every URL from the root: Location, Link, servers, docs, the access log", async () => {
    const created = await post(at("/v1/pets"), rex)
    assert.equal(created.status, 201, created.text)
    assert.equal(created.headers.get("location"), "/v1/pets/1")
    assert.equal((await post(at("/v1/pets"), tom)).status, 201)
    const listed = await get(at("/v1/pets?limit=1"), authorized)
    assert.match(linkOf(listed.headers.get("link")).uri, /^\/v1\/pets\?limit=1&cursor=/)
    const fetched = await get(at("/v1/pets/1"), authorized)
    assert.equal(fetched.headers.get("link"), '</v1/pets>; rel="successor-version"')
    const document = await get(at("/v1/openapi.json"))
    assert.deepEqual(serversOf(document.json()), [{ url: "/v1", description: "This server" }])
    const page = at("/docs")
    const urls = linkedUrls((await get(page)).text, page)
    for (const url of urls) assert.match(url.pathname, /^\/docs\/[\w.-]+$/, url.href)
    const initializer = urls.find((url) => url.pathname === "/docs/initializer.js")
    assert.ok(initializer !== undefined)
    assert.equal(documentUrlOf((await get(initializer.href)).text), "/v1/openapi.json")
    assert.ok(petstore.logged.some((line) => line.route === "/v1/pets"))
    assert.ok(petstore.logged.every((line) => !line.route?.startsWith("/petstore")))
  })
})

describe("one app, mounted and served at its root at once", () => {
  let petstore: PetstoreApp
  let hosted: Served
  let direct: Served

  before(async () => {
    petstore = petstoreApp()
    hosted = await serve(hostApp(mounted(petstore.app)).callback())
    direct = await serve(petstore.app.callback())
  })
  after(async () => {
    await hosted.close()
    await direct.close()
    await petstore.dispose()
  })

  it("writes each request's URLs for the path it came by", async () => {
    for (let round = 0; round < 2; round++) {
      const underMount = await get(`${hosted.origin}/petstore/v1/openapi.json`)
      assert.deepEqual(serversOf(underMount.json()), [
        { url: "/petstore/v1", description: "This server" },
      ])
      const atRoot = await get(`${direct.origin}/v1/openapi.json`)
      assert.deepEqual(serversOf(atRoot.json()), [{ url: "/v1", description: "This server" }])
      const mountedCreate = await post(`${hosted.origin}/petstore/v1/pets`, rex)
      assert.match(mountedCreate.headers.get("location") ?? "", /^\/petstore\/v1\/pets\/\d+$/)
      const rootCreate = await post(`${direct.origin}/v1/pets`, rex)
      assert.match(rootCreate.headers.get("location") ?? "", /^\/v1\/pets\/\d+$/)
      const mountedGet = await get(`${hosted.origin}/petstore/v1/pets/1`, authorized)
      assert.equal(mountedGet.headers.get("link"), '</petstore/v1/pets>; rel="successor-version"')
      const rootGet = await get(`${direct.origin}/v1/pets/1`, authorized)
      assert.equal(rootGet.headers.get("link"), '</v1/pets>; rel="successor-version"')
    }
  })
})

/** Each public route, where the mounted app serves it. */
const publicRoutes: ReadonlyArray<{
  readonly name: keyof PublicRoutes
  readonly paths: ReadonlyArray<string>
}> = [
  { name: "health", paths: ["/healthz"] },
  { name: "readiness", paths: ["/readyz"] },
  { name: "metrics", paths: ["/metrics"] },
  { name: "docs", paths: ["/docs", "/docs/swagger-ui.css", "/docs/initializer.js"] },
  { name: "document", paths: ["/v1/openapi.json"] },
]

describe("each public route, turned off under the mount", () => {
  for (const off of publicRoutes) {
    it(`publicRoutes.${off.name}: false leaves ${off.paths.join(", ")} unserved, and only those`, async () => {
      const petstore = petstoreApp({
        metrics: createMetrics({ processMetrics: false }),
        publicRoutes: { [off.name]: false },
      })
      const served = await serve(hostApp(mounted(petstore.app)).callback())
      try {
        for (const route of publicRoutes) {
          for (const path of route.paths) {
            const url = `${served.origin}${mountPath}${path}`
            if (route === off) {
              const keyless = await get(url)
              assert.equal(keyless.status, 401, `${path} without a key`)
              const keyed = await get(url, authorized)
              assert.equal(keyed.status, 404, `${path} with a key`)
              assert.deepEqual(keyed.json(), {
                code: "not_found",
                message: `nothing is at ${mountPath}${path}`,
                status: 404,
              })
            } else {
              assert.equal((await get(url)).status, 200, path)
            }
          }
        }
        assert.equal((await post(`${served.origin}${mountPath}/v1/pets`, rex)).status, 201)
      } finally {
        await served.close()
        await petstore.dispose()
      }
    })
  }

  it("metricsRoute: false still turns /metrics off, whatever publicRoutes.metrics says", async () => {
    const petstore = petstoreApp({
      metrics: createMetrics({ processMetrics: false }),
      metricsRoute: false,
      publicRoutes: { metrics: true },
    })
    const served = await serve(hostApp(mounted(petstore.app)).callback())
    try {
      assert.equal((await get(`${served.origin}${mountPath}/metrics`, authorized)).status, 404)
      assert.equal((await get(`${served.origin}${mountPath}/healthz`)).status, 200)
    } finally {
      await served.close()
      await petstore.dispose()
    }
  })
})
