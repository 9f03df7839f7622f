import assert from "node:assert/strict"
import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { dirname } from "node:path"
import { after, before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { chromium, type Browser, type Page } from "playwright-core"
import {
  apiKey,
  hostApp,
  mounted,
  mountPath,
  petstoreApp,
  post,
  serve,
  type PetstoreApp,
  type Served,
} from "../harness/mount.js"

const chromiumPath = "/usr/bin/chromium"
const screenshotPath = fileURLToPath(
  new URL("../../../../test-artifacts/docs-mounted.png", import.meta.url),
)

/** Without the browser the test is skipped, except in CI, where it must run. */
const skip =
  existsSync(chromiumPath) || process.env["CI"] === "true"
    ? false
    : `${chromiumPath} is missing (Debian package chromium)`

/** Reported by the page whenever its Content-Security-Policy blocks something. */
const reportViolations = `document.addEventListener("securitypolicyviolation", (event) => {
  window.reportCspViolation(event.violatedDirective + " blocked " + event.blockedURI)
})`

describe(
  "the API reference page mounted at /petstore, in Chromium",
  { skip, timeout: 60_000 },
  () => {
    let petstore: PetstoreApp | undefined
    let served: Served | undefined
    let browser: Browser | undefined
    let origin = ""
    let page: Page
    const documentRequests: Array<string> = []
    const consoleErrors: Array<string> = []
    const cspViolations: Array<string> = []
    const offHostRequests: Array<string> = []
    const notFound: Array<string> = []

    before(async () => {
      assert.ok(
        existsSync(chromiumPath),
        `${chromiumPath} is missing; CI must run the browser test`,
      )
      petstore = petstoreApp()
      served = await serve(hostApp(mounted(petstore.app)).callback())
      origin = served.origin
      const created = await post(
        `${origin}${mountPath}/v1/pets`,
        JSON.stringify({ name: "Rex", categoryId: 1, status: "available" }),
      )
      assert.equal(created.status, 201, created.text)
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
          "--disable-quic",
        ],
        timeout: 20_000,
      })
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
      context.setDefaultTimeout(10_000)
      await context.route("**/*", (route) => {
        const url = new URL(route.request().url())
        if (url.hostname === "127.0.0.1") return route.continue()
        offHostRequests.push(url.href)
        return route.abort("blockedbyclient")
      })
      await context.exposeFunction("reportCspViolation", (violation: string) => {
        cspViolations.push(violation)
      })
      await context.addInitScript(reportViolations)
      page = await context.newPage()
      page.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text())
      })
      page.on("pageerror", (error) => consoleErrors.push(error.message))
      page.on("response", (response) => {
        const url = new URL(response.url())
        if (url.pathname.endsWith("/openapi.json")) documentRequests.push(url.pathname)
        if (response.status() === 404) notFound.push(url.pathname)
      })
      const response = await page.goto(`${origin}${mountPath}/docs`, { waitUntil: "load" })
      assert.equal(response?.status(), 200)
      await page.locator(".opblock").first().waitFor()
    })

    after(async () => {
      await browser?.close()
      await served?.close()
      await petstore?.dispose()
    })

    it("loads the document from under the mount path, and every file the page needs", () => {
      assert.deepEqual(documentRequests, ["/petstore/v1/openapi.json"])
      assert.deepEqual(notFound, [])
    })

    it("shows the mount path as the server and renders the three operations", async () => {
      assert.equal(await page.locator(".errors-wrapper").count(), 0, "Swagger UI reported errors")
      assert.equal(await page.locator(".opblock").count(), 3)
      const server = page.locator(".servers select")
      assert.equal(await server.inputValue(), "/petstore/v1")
    })

    it("sends an authorized try-it-out request under the mount path and shows its 200", async () => {
      await page.locator(".auth-wrapper button.authorize").click()
      const dialog = page.locator(".dialog-ux")
      await dialog.locator("input#auth-bearer-value").fill(apiKey)
      await dialog.locator("button.authorize[type=submit]").click()
      await dialog.getByRole("button", { name: "Remove authorization" }).waitFor()
      await dialog.locator("button.btn-done").click()

      const listPets = page.locator(".opblock").filter({
        has: page.locator(".opblock-summary-operation-id", { hasText: /^listPets$/ }),
      })
      await listPets.locator(".opblock-summary-control").click()
      await listPets.getByRole("button", { name: "Try it out" }).click()
      const [sent] = await Promise.all([
        page.waitForResponse((response) => new URL(response.url()).pathname.endsWith("/pets")),
        listPets.getByRole("button", { name: "Execute" }).click(),
      ])
      assert.equal(new URL(sent.url()).pathname, "/petstore/v1/pets")
      assert.equal(await sent.request().headerValue("authorization"), `Bearer ${apiKey}`)
      assert.equal(sent.status(), 200)
      const shownStatus = listPets.locator(".live-responses-table tbody .response-col_status")
      await shownStatus.waitFor()
      assert.equal((await shownStatus.textContent())?.trim(), "200")
      assert.match(
        (await listPets.locator(".live-responses-table tbody").textContent()) ?? "",
        /"name": "Rex"/,
      )
      await mkdir(dirname(screenshotPath), { recursive: true })
      await page.screenshot({ path: screenshotPath, fullPage: true })
    })

    it("logged no console error, broke no CSP rule and asked for nothing off this host", () => {
      assert.deepEqual(consoleErrors, [])
      assert.deepEqual(cspViolations, [])
      assert.deepEqual(offHostRequests, [])
    })
  },
)
