import assert from "node:assert/strict"
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import os from "node:os"
import path from "node:path"
import { performance } from "node:perf_hooks"
import { after, before, describe, it, type TestContext } from "node:test"
import { isRecord } from "../lib/json.js"
import { attwTarball, publintTarball } from "../lib/linters.js"
import { packAll, type Packed } from "../lib/packing.js"
import { run, runOk, start, type Finished } from "../lib/processes.js"
import { addFile, compile, install, installedCopies, makeProject } from "../lib/projects.js"
import { brokenSourceMapReferences, missingFiles, unexpectedFiles } from "../lib/tarball-rules.js"
import {
  examplePath,
  fixturePath,
  ownDevDependencies,
  publicWorkspaces,
  publishedPackages,
  type PublishedName,
} from "../lib/workspace.js"

const keep = process.env["PETSTORE_PACKAGE_CHECK_KEEP"] === "1"
const startedAt = performance.now()
const timings: Array<string> = []
let workspace = ""
let packed: ReadonlyMap<PublishedName, Packed> = new Map()

/** Notes how long a step took, under its test and in the summary printed at the end. */
const timed = <A extends { readonly seconds: number }>(t: TestContext, label: string, step: A) => {
  const line = `${label}: ${step.seconds.toFixed(1)} s`
  timings.push(line)
  t.diagnostic(line)
  return step
}

const tarballOf = (name: PublishedName): Packed => {
  const found = packed.get(name)
  if (found === undefined) throw new Error(`${name} was not packed`)
  return found
}

const tarballs = (...names: ReadonlyArray<PublishedName>) =>
  names.map((name) => tarballOf(name).tarball)

/** Off the critical path: everything but the SQLite project's install and compile. */
const lowPriority = { lowPriority: true }
const background = { ...lowPriority, timeoutMs: 150_000 }

const node = (project: string, args: ReadonlyArray<string>): Promise<Finished> =>
  runOk(process.execPath, args, { cwd: project, timeoutMs: 60_000 })

before(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), "petstore-package-check-"))
  const began = performance.now()
  packed = new Map((await packAll(workspace)).map((entry) => [entry.name, entry]))
  timings.push(`npm pack (six packages): ${((performance.now() - began) / 1000).toFixed(1)} s`)
})

after(async () => {
  timings.push(`total: ${((performance.now() - startedAt) / 1000).toFixed(1)} s`)
  console.log(["package-check timings:", ...timings.map((line) => `  ${line}`)].join("\n"))
  if (keep) console.log(`kept ${workspace}`)
  else if (workspace !== "") await rm(workspace, { recursive: true, force: true })
})

// Everything below starts at once; the SQLite project, which compiles better-sqlite3, takes
// longest, so the rest runs at a lower CPU priority.
describe("the published packages", { concurrency: true }, () => {
  it("are every workspace that is not private, each a devDependency of this check", async () => {
    const names = publishedPackages.map(({ name }) => name)
    assert.deepEqual([...names].sort(), await publicWorkspaces())
    // Turbo builds a package before the tests of the workspaces that depend on it.
    const devDependencies = await ownDevDependencies()
    assert.deepEqual(
      names.filter((name) => devDependencies[name] !== "^1.0.0"),
      [],
      "add them to tools/package-check's devDependencies",
    )
  })

  for (const { name } of publishedPackages) {
    describe(`${name} as packed`, () => {
      it("holds only compiled JS, declarations and their maps, package.json, README.md and LICENSE", () => {
        const { files } = tarballOf(name)
        assert.deepEqual(unexpectedFiles(files), [], "files that should not be published")
        assert.deepEqual(missingFiles(files), [], "files every package must publish")
        assert.ok(
          files.some((file) => file.endsWith(".js")),
          "no compiled JavaScript: is dist/ built?",
        )
      })

      it("has source maps that lead only to files it holds", () => {
        const { files, unpacked } = tarballOf(name)
        const read = (file: string) => readFileSync(path.join(unpacked, file), "utf8")
        assert.deepEqual(brokenSourceMapReferences(files, read), [])
      })

      it("passes publint with no error and no warning", async (t) => {
        const report = await publintTarball(tarballOf(name).tarball)
        for (const suggestion of report.suggestions) t.diagnostic(suggestion)
        assert.deepEqual(report.problems, [])
      })

      it("passes Are the Types Wrong for an ESM-only package", async (t) => {
        const attw = timed(t, `attw ${name}`, await attwTarball(tarballOf(name).tarball, workspace))
        assert.equal(attw.code, 0, `${attw.stdout}${attw.stderr}`)
      })
    })
  }

  describe("in a fresh project outside the monorepo", { concurrency: true }, () => {
    it(
      "sqlite-file: a pet created, the file closed and reopened, the pet reread",
      { timeout: 330_000 },
      sqliteFile,
    )
    it(
      "core-memory: the use cases on the memory adapter, no driver, one effect",
      { timeout: 180_000 },
      coreMemory,
    )
    it(
      "contract-suite: the memory adapter passes, one whose list ignores the limit fails",
      { timeout: 240_000 },
      contractSuite,
    )
    it(
      "koa-mount: the app at /petstore in a host app with an app-wide body parser",
      { timeout: 240_000 },
      koaMount,
    )
  })
})

async function sqliteFile(t: TestContext) {
  // npm 11 asks a project to name the dependencies whose install scripts it lets run.
  const project = await makeProject(workspace, "sqlite-file", {
    allowScripts: { "better-sqlite3": true },
  })
  await addFile(project, examplePath("sqlite-file.ts"))
  const specs = [
    ...tarballs("@petstore/core", "@petstore/storage", "@petstore/storage-sqlite"),
    "effect@^3.22.4",
    "@effect/sql@^0.52.1",
    "@effect/sql-sqlite-node@^0.53.0",
    "@effect/experimental@^0.61.1",
    "@effect/platform@^0.97.2",
    "@types/node@^20",
  ]
  const installed = await install(project, specs, { timeoutMs: 270_000 })
  timed(t, "sqlite-file: npm install (compiles better-sqlite3)", installed)
  timed(t, "sqlite-file: tsc", await compile(project))

  const file = path.join(project, "store", "pets.db")
  const first = timed(t, "sqlite-file: run", await node(project, ["dist/sqlite-file.js", file]))
  const rex = { id: 1, name: "Rex", categoryId: 1 }
  assert.deepEqual(JSON.parse(first.stdout), { created: rex, reread: rex })
  // A second process finds the first one's pet in the file: the next id is 2.
  const second = await node(project, ["dist/sqlite-file.js", file])
  const rex2 = { ...rex, id: 2 }
  assert.deepEqual(JSON.parse(second.stdout), { created: rex2, reread: rex2 })
}

async function coreMemory(t: TestContext) {
  const project = await makeProject(workspace, "core-memory")
  await addFile(project, examplePath("core-memory.ts"))
  const specs = [
    ...tarballs("@petstore/core", "@petstore/storage"),
    "effect@^3.22.4",
    "@types/node@^20",
  ]
  timed(t, "core-memory: npm install", await install(project, specs, background))
  timed(t, "core-memory: tsc", await compile(project, lowPriority))

  const ran = timed(t, "core-memory: run", await node(project, ["dist/core-memory.js"]))
  const rex = { id: 1, name: "Rex", categoryId: 1, status: "available" }
  assert.deepEqual(JSON.parse(ran.stdout), { created: rex, listed: [rex], found: rex })
  assert.deepEqual(await installedCopies(project, "better-sqlite3"), [])
  assert.deepEqual(await installedCopies(project, "pg"), [])
  assert.deepEqual(await installedCopies(project, "effect"), ["node_modules/effect"])
}

async function contractSuite(t: TestContext) {
  const project = await makeProject(workspace, "contract-suite")
  const adapters = { memory: "memory-adapter.ts", broken: "limit-ignoring-adapter.ts" }
  for (const [folder, adapter] of Object.entries(adapters)) {
    await addFile(
      project,
      examplePath("contract-suite.test.ts"),
      `${folder}/contract-suite.test.ts`,
    )
    await addFile(project, fixturePath(adapter), `${folder}/MyPetRepository.ts`)
  }
  const specs = [
    ...tarballs("@petstore/core", "@petstore/storage"),
    "effect@^3.22.4",
    "@types/node@^20",
  ]
  timed(t, "contract-suite: npm install", await install(project, specs, background))
  timed(t, "contract-suite: tsc", await compile(project, lowPriority))
  const suite = (folder: keyof typeof adapters) =>
    run(
      process.execPath,
      ["--test", "--test-reporter=tap", `dist/${folder}/contract-suite.test.js`],
      {
        cwd: project,
        timeoutMs: 60_000,
      },
    )

  const passing = timed(t, "contract-suite: node --test (memory)", await suite("memory"))
  assert.equal(passing.code, 0, passing.stdout)
  assert.match(passing.stdout, /^# fail 0$/m)
  assert.ok(Number(/^# pass (\d+)$/m.exec(passing.stdout)?.[1]) >= 10, passing.stdout)

  const failing = timed(t, "contract-suite: node --test (broken)", await suite("broken"))
  assert.notEqual(failing.code, 0, failing.stdout)
  const failed = [...failing.stdout.matchAll(/^\s*not ok \d+ - (.+?)(?: # .*)?$/gm)].map(
    (match) => match[1],
  )
  assert.ok(
    failed.includes("list returns pets in ascending id order, at most limit of them"),
    `the limit case did not fail; failed: ${failed.join(", ")}`,
  )
}

async function koaMount(t: TestContext) {
  const project = await makeProject(workspace, "koa-mount")
  await addFile(project, examplePath("koa-mount.ts"))
  await addFile(project, fixturePath("client-get-pet.ts"))
  const specs = [
    ...tarballs("@petstore/core", "@petstore/storage", "@petstore/http", "@petstore/client"),
    "effect@^3.22.4",
    "koa@^3",
    "koa-mount@^4",
    "@koa/bodyparser@^6",
    "@types/koa@^3",
    "@types/koa-mount@^4",
    "@types/node@^20",
  ]
  timed(t, "koa-mount: npm install", await install(project, specs, background))
  timed(t, "koa-mount: tsc", await compile(project, lowPriority))
  assert.deepEqual(await installedCopies(project, "better-sqlite3"), [])
  assert.deepEqual(await installedCopies(project, "effect"), ["node_modules/effect"])

  const apiKey = "package-check-key"
  const port = await freePort()
  const server = start(process.execPath, ["dist/koa-mount.js"], {
    cwd: project,
    env: { PORT: String(port), PETSTORE_API_KEY: apiKey },
  })
  t.after(() => server.stop(5_000))
  await server.lineMatching(/Petstore API on/, 15_000)
  await mountedChecks(t, `http://127.0.0.1:${port}`, apiKey, project)
  // The example closes its server and disposes of its runtime on SIGTERM, then exits by itself.
  assert.deepEqual(await server.stop(5_000), { code: 0, killed: false }, server.output())
}

/** A port nothing listens on now. */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() =>
        typeof address === "object" && address !== null
          ? resolve(address.port)
          : reject(new Error("no port")),
      )
    })
  })

/** A request that gives up after 5 s: a body the host's parser already read never ends. */
const request = (url: string | URL, init: RequestInit = {}) =>
  fetch(url, { ...init, signal: AbortSignal.timeout(5_000) })

const nextLink = (response: Response): string | undefined =>
  /<([^>]+)>\s*;\s*rel="next"/.exec(response.headers.get("link") ?? "")?.[1]

/** The HTTP checks of the mounted app; each a subtest, so the report says which held. */
const mountedChecks = async (t: TestContext, origin: string, apiKey: string, project: string) => {
  const api = `${origin}/petstore/v1`
  const authorization = { authorization: `Bearer ${apiKey}` }
  const created: Array<unknown> = []
  const locations: Array<string> = []

  await t.test("creates pets: 201, each at a Location under /petstore/v1", async () => {
    for (const name of ["Rex", "Tom", "Bella"]) {
      const response = await request(`${api}/pets`, {
        method: "POST",
        headers: { ...authorization, "content-type": "application/json" },
        body: JSON.stringify({ name, categoryId: 1, status: "available" }),
      })
      const body: unknown = await response.json()
      assert.equal(response.status, 201, JSON.stringify(body))
      assert.ok(isRecord(body) && typeof body["id"] === "number")
      const location = response.headers.get("location") ?? ""
      assert.equal(location, `/petstore/v1/pets/${body["id"]}`)
      created.push(body)
      locations.push(location)
    }
  })

  await t.test("lists them two at a time, following Link under /petstore/v1", async () => {
    const listed: Array<unknown> = []
    const links: Array<string> = []
    let url: URL | undefined = new URL(`${api}/pets?limit=2`)
    while (url !== undefined && listed.length < 10) {
      const response: Response = await request(url, { headers: authorization })
      assert.equal(response.status, 200)
      const page: unknown = await response.json()
      assert.ok(Array.isArray(page))
      listed.push(...page)
      const link = nextLink(response)
      if (link !== undefined) links.push(link)
      url = link === undefined ? undefined : new URL(link, response.url)
    }
    assert.equal(links.length, 1)
    assert.match(links[0] ?? "", /^\/petstore\/v1\/pets\?/)
    assert.deepEqual(listed, created)
  })

  await t.test("fetches one pet at its Location, and through @petstore/client", async () => {
    const [first] = created
    const [location] = locations
    assert.ok(isRecord(first) && location !== undefined)
    const response = await request(new URL(location, origin), { headers: authorization })
    assert.equal(response.status, 200)
    assert.deepEqual(await response.json(), first)
    const viaClient = await node(project, [
      "dist/client-get-pet.js",
      api,
      apiKey,
      String(first["id"]),
    ])
    assert.deepEqual(JSON.parse(viaClient.stdout), first)
  })

  await t.test("serves /petstore/v1/openapi.json, naming /petstore/v1 its server", async () => {
    const response = await request(`${api}/openapi.json`)
    assert.equal(response.status, 200)
    const document: unknown = await response.json()
    assert.ok(isRecord(document) && Array.isArray(document["servers"]))
    assert.deepEqual(
      document["servers"].map((server: unknown) => (isRecord(server) ? server["url"] : server)),
      ["/petstore/v1"],
    )
  })

  await t.test("serves /petstore/docs and every asset it links", async () => {
    const page = await request(`${origin}/petstore/docs`)
    assert.equal(page.status, 200)
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
    const html = await page.text()
    const assets = [...html.matchAll(/\s(?:href|src)="([^"]+)"/g)].map((match) =>
      new URL(match[1] ?? "", page.url).toString(),
    )
    assert.ok(
      assets.some((asset) => asset.includes(".css")),
      "no stylesheet linked",
    )
    assert.ok(
      assets.some((asset) => asset.includes(".js")),
      "no script linked",
    )
    const statuses = await Promise.all(
      assets.map(async (asset) => {
        const response = await request(asset)
        await response.arrayBuffer()
        return `${response.status} ${asset}`
      }),
    )
    assert.deepEqual(
      statuses.filter((status) => !status.startsWith("200 ")),
      [],
      "assets not served",
    )
  })
}
