import assert from "node:assert/strict"
import { after, before, describe, it } from "node:test"
import { assertError } from "@petstore/test-support/error-body"
import { rawRequest } from "@petstore/test-support/raw-exchange"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

const contentTypeByExtension: ReadonlyArray<readonly [RegExp, string]> = [
  [/\.css$/, "text/css; charset=utf-8"],
  [/\.js$/, "text/javascript; charset=utf-8"],
  [/\.png$/, "image/png"],
]

const expectedContentType = (url: URL) =>
  contentTypeByExtension.find(([extension]) => extension.test(url.pathname))?.[1]

/** Every URL the page loads: `src` and `href` attribute values, resolved against the page. */
const referencedUrls = (html: string, page: URL): ReadonlyArray<URL> =>
  [...html.matchAll(/\s(?:src|href)="([^"]*)"/g)].map((match) => new URL(match[1] ?? "", page))

describe("GET /docs", () => {
  let server: TestServer
  let page: URL
  let html: string
  before(async () => {
    server = await startServer()
    page = new URL("/docs", server.origin)
    html = await (await fetch(page)).text()
  })
  after(() => server.close())

  it("is an HTML page served without an API key, under a Content-Security-Policy", async () => {
    const response = await fetch(page)
    assert.equal(response.status, 200)
    assert.equal(response.headers.get("content-type"), "text/html; charset=utf-8")
    assert.equal(response.headers.get("cache-control"), "no-cache")
    assert.equal(response.headers.get("x-content-type-options"), "nosniff")
    const policy = response.headers.get("content-security-policy") ?? ""
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "connect-src 'self'",
      "img-src 'self' data:",
    ]) {
      assert.ok(policy.split("; ").includes(directive), `${directive} in ${policy}`)
    }
    assert.doesNotMatch(policy, /unsafe-|\*|https?:/)
    assert.match(await response.text(), /<div id="swagger-ui"><\/div>/)
  })

  it("has no inline script or style, which the policy would block", () => {
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
    assert.ok(scripts.length >= 2)
    for (const [, attributes, content] of scripts) {
      assert.match(attributes ?? "", /\ssrc="/)
      assert.equal(content, "")
    }
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i)
  })

  it("links no asset off this host", () => {
    const urls = referencedUrls(html, page)
    assert.ok(urls.length >= 5, `found ${urls.length} asset URLs`)
    for (const url of urls) assert.equal(url.origin, server.origin, url.href)
  })

  it("serves every asset the page links, with its content type, cacheable for good", async () => {
    for (const url of referencedUrls(html, page)) {
      const response = await fetch(url)
      assert.equal(response.status, 200, url.href)
      assert.equal(response.headers.get("content-type"), expectedContentType(url), url.href)
      assert.equal(
        response.headers.get("cache-control"),
        "public, max-age=31536000, immutable",
        url.href,
      )
      assert.ok((await response.arrayBuffer()).byteLength > 0, url.href)
    }
  })

  it("links Swagger UI's stylesheet, bundle and the initializer that loads the document", async () => {
    const paths = referencedUrls(html, page).map((url) => url.pathname)
    for (const path of ["/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]) {
      assert.ok(paths.includes(path), path)
    }
    const initializer = referencedUrls(html, page).find(
      (url) => url.pathname === "/docs/initializer.js",
    )
    assert.ok(initializer !== undefined)
    const script = await (await fetch(initializer)).text()
    assert.match(script, /url: "\/v1\/openapi\.json"/)
    assert.match(script, /persistAuthorization: false/)
  })

  it("answers a repeated asset request with 304 when its ETag still matches", async () => {
    const url = new URL("/docs/swagger-ui-bundle.js", server.origin)
    const first = await fetch(url)
    assert.equal(first.headers.get("cache-control"), "no-cache")
    const etag = first.headers.get("etag")
    assert.ok(etag !== null && /^"[A-Za-z0-9_-]+"$/.test(etag), String(etag))
    // fetch sends `Cache-Control: no-cache` with a conditional request unless told otherwise,
    // and a server must then answer in full.
    const again = await fetch(url, {
      headers: { "If-None-Match": etag, "Cache-Control": "max-age=0" },
    })
    assert.equal(again.status, 304)
    assert.equal(await again.text(), "")
  })

  it("serves nothing outside its allow-list: 404 with a key, 401 without", async () => {
    for (const path of [
      "/docs/index.html",
      "/docs/swagger-ui.js",
      "/docs/swagger-ui-bundle.js.map",
      "/docs/swagger-initializer.js",
      "/docs/oauth2-redirect.html",
      "/docs/package.json",
      "/docs/absolute-path.js",
      "/docs/..%2Fpackage.json",
      "/docs/%2e%2e/%2e%2e/%2e%2e/package.json",
      "/docs/assets/swagger-ui.css",
    ]) {
      const withKey = { headers: { Authorization: `Bearer ${apiKey}` } }
      await assertError(await fetch(`${server.origin}${path}`, withKey), 404, "not_found")
      await assertError(await fetch(`${server.origin}${path}`), 401, "unauthorized")
    }
  })

  it("does not resolve dot segments sent as they are", async () => {
    const answer = await rawRequest(
      server.origin,
      `GET /docs/../../../package.json HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nConnection: close\r\n\r\n`,
    )
    assert.match(answer, /^HTTP\/1\.1 404 /)
    assert.match(answer, /\r\n\r\n\{"code":"not_found",/)
  })

  it("answers a method other than GET with 405 and Allow", async () => {
    const response = await fetch(page, { method: "POST" })
    await assertError(response, 405, "method_not_allowed")
    assert.match(response.headers.get("allow") ?? "", /\bGET\b/)
  })
})

describe("GET /docs under another base path", () => {
  let server: TestServer
  before(async () => {
    server = await startServer({ basePath: "/api/v2" })
  })
  after(() => server.close())

  it("loads the document from that base path", async () => {
    const script = await (await fetch(`${server.origin}/docs/initializer.js`)).text()
    assert.match(script, /url: "\/api\/v2\/openapi\.json"/)
  })
})
