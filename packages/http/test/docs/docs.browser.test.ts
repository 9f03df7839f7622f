import assert from "node:assert/strict"
import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { dirname } from "node:path"
import { after, before, describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { chromium, type Browser, type Locator, type Page } from "playwright-core"
import { postJson } from "@petstore/test-support/requests"
import { apiKey, startServer, type TestServer } from "../harness/server.js"

const chromiumPath = "/usr/bin/chromium"
const screenshotPath = fileURLToPath(
  new URL("../../../../test-artifacts/docs.png", import.meta.url),
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

interface ShownOperation {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly deprecated: boolean
}

const shownOperation = async (block: Locator): Promise<ShownOperation> => ({
  operationId: (await block.locator(".opblock-summary-operation-id").textContent()) ?? "",
  method: (await block.locator(".opblock-summary-method").textContent()) ?? "",
  path: (await block.locator("[data-path]").getAttribute("data-path")) ?? "",
  deprecated: ((await block.getAttribute("class")) ?? "")
    .split(/\s+/)
    .includes("opblock-deprecated"),
})

describe("the API reference page in Chromium", { skip, timeout: 60_000 }, () => {
  let server: TestServer | undefined
  let browser: Browser | undefined
  let origin = ""
  let page: Page
  const consoleErrors: Array<string> = []
  const cspViolations: Array<string> = []
  const offHostRequests: Array<string> = []

  const operation = (operationId: string) =>
    page.locator(".opblock").filter({
      has: page.locator(".opblock-summary-operation-id", {
        hasText: new RegExp(`^${operationId}$`),
      }),
    })

  before(async () => {
    assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing; CI must run the browser test`)
    server = await startServer()
    origin = server.origin
    const created = await server.api(
      "/pets",
      postJson({ name: "Rex", categoryId: 1, status: "available" }),
    )
    assert.equal(created.status, 201)
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
    const response = await page.goto(`${origin}/docs`, { waitUntil: "load" })
    assert.equal(response?.status(), 200)
    await page.locator(".opblock").first().waitFor()
  })

  after(async () => {
    await browser?.close()
    await server?.close()
  })

  it("renders the document without errors: the three operations, getPet as deprecated", async () => {
    assert.equal(await page.locator(".errors-wrapper").count(), 0, "Swagger UI reported errors")
    const shown = await Promise.all((await page.locator(".opblock").all()).map(shownOperation))
    assert.deepEqual(
      [...shown].sort((a, b) => a.operationId.localeCompare(b.operationId)),
      [
        { operationId: "createPet", method: "POST", path: "/pets", deprecated: false },
        { operationId: "getPet", method: "GET", path: "/pets/{petId}", deprecated: true },
        { operationId: "listPets", method: "GET", path: "/pets", deprecated: false },
      ],
    )
  })

  it("sends an authorized try-it-out request that gets 200 from the live server", async () => {
    await page.locator(".auth-wrapper button.authorize").click()
    const dialog = page.locator(".dialog-ux")
    await dialog.locator("input#auth-bearer-value").fill(apiKey)
    await dialog.locator("button.authorize[type=submit]").click()
    await dialog.getByRole("button", { name: "Remove authorization" }).waitFor()
    await dialog.locator("button.btn-done").click()

    const listPets = operation("listPets")
    await listPets.locator(".opblock-summary-control").click()
    assert.match(page.url(), /#\/[^/]+\/listPets$/, "deep link to the opened operation")
    await listPets.getByRole("button", { name: "Try it out" }).click()
    const [sent] = await Promise.all([
      page.waitForResponse((response) => response.url().startsWith(`${origin}/v1/pets`)),
      listPets.getByRole("button", { name: "Execute" }).click(),
    ])
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
})
