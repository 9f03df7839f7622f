/**
 * Does a listing page cost the same in a store of 1,000 pets as in one of 1,000,000?
 * Seeds each store in bulk with SQL, serves it with the real app on 127.0.0.1, then times
 * `GET /v1/pets?status=sold&limit=100` while following the `rel="next"` cursors; and, with the
 * sold pets all among the oldest, a page past the last of them (where a query that filters the
 * primary key instead of walking the (status, id) index would read half the table).
 *
 *   npm run list-scale -w @petstore/bench [-- --requests 2000]
 */
import { parseArgs } from "node:util"
import type * as SqlClient from "@effect/sql/SqlClient"
import { createApp } from "@petstore/http"
import { PageCursor, PetId } from "@petstore/core"
import { Effect, ManagedRuntime, Schema } from "effect"
import { serveInProcess } from "./in-process-server.js"
import { milliseconds, percentile, table } from "./statistics.js"
import { migrate, postgresStore, sqliteStore, type BenchStore } from "./stores.js"

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "2000" },
    warmup: { type: "string", default: "100" },
  },
})
const requests = Number(values.requests)
const warmup = Number(values.warmup)
const sizes = [1_000, 1_000_000]
const apiKey = "bench-key"
const firstPage = "/v1/pets?status=sold&limit=100"

type Layout = "uniform" | "skewed"

/**
 * Uniform: statuses cycle available, pending, sold, none, so a quarter of the pets are sold.
 * Skewed: only the oldest quarter are sold, the rest cycle available, pending, none.
 */
const seed = (sql: SqlClient.SqlClient, count: number, layout: Layout) => {
  const soldBelow = layout === "uniform" ? 0 : Math.floor(count / 4)
  return sql.onDialectOrElse({
    pg: () => sql`
      INSERT INTO pets (name, category_id, status)
      SELECT 'pet ' || n, n % 100,
        CASE WHEN n < ${soldBelow} THEN 'sold'
          ELSE (ARRAY['available', 'pending', ${layout === "uniform" ? "sold" : null}, NULL])[n % 4 + 1] END
      FROM generate_series(0, ${count - 1}) AS n`,
    orElse: () => sql`
      WITH RECURSIVE sequence(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM sequence WHERE n < ${count - 1})
      INSERT INTO pets (name, category_id, status)
      SELECT 'pet ' || n, n % 100,
        CASE WHEN n < ${soldBelow} THEN 'sold'
          ELSE CASE n % 4 WHEN 0 THEN 'available' WHEN 1 THEN 'pending'
            WHEN 2 THEN ${layout === "uniform" ? "sold" : null} END END
      FROM sequence`,
  })
}

const analyze = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({ pg: () => sql`VACUUM ANALYZE pets`, orElse: () => sql`ANALYZE` })

/** How the engine runs the repository's status query, to show it walks the (status, id) index. */
const queryPlan = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql.onDialectOrElse({
      pg: () => sql`EXPLAIN SELECT id, name, category_id, status FROM pets
        WHERE (status, id) > ('sold', 500000) AND (status, id) <= ('sold', 9007199254740991)
        ORDER BY status, id LIMIT 101`,
      orElse: () => sql`EXPLAIN QUERY PLAN SELECT id, name, category_id, status
        FROM pets INDEXED BY pets_status_id
        WHERE status = 'sold' AND id > 500000 ORDER BY id LIMIT 101`,
    }),
    (rows) =>
      rows
        .map((row) => String(row["QUERY PLAN"] ?? row["detail"]).trim())
        .filter((line) => !line.startsWith("Limit"))
        .join("; "),
  )

/**
 * Times page requests from `start`, following each page's next link (when `follow`) and
 * starting over after the last page.
 */
const timePages = async (origin: string, start: string, follow: boolean) => {
  const headers = { Authorization: `Bearer ${apiKey}` }
  const timings: Array<number> = []
  let next = start
  for (let i = 0; i < warmup + requests; i++) {
    const started = performance.now()
    const response = await fetch(`${origin}${next}`, { headers })
    const pets: unknown = await response.json()
    const elapsed = performance.now() - started
    if (response.status !== 200 || !Array.isArray(pets))
      throw new Error(`status ${response.status}`)
    if (i >= warmup) timings.push(elapsed)
    const link = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("Link") ?? "")?.[1]
    next = follow ? (link ?? start) : start
  }
  return timings
}

interface Scenario {
  readonly layout: Layout
  readonly title: string
  /** The first request's path in a store of `size` pets. */
  readonly start: (size: number) => string
  readonly follow: boolean
}

const encodeCursor = Schema.encodeSync(PageCursor)

const scenarios: ReadonlyArray<Scenario> = [
  {
    layout: "uniform",
    title: `GET ${firstPage}, following the cursors; a quarter of the pets sold, spread evenly`,
    start: () => firstPage,
    follow: true,
  },
  {
    layout: "skewed",
    title: `The same with a cursor past the last sold pet (only the oldest quarter are sold; the cursor names the middle id, so the page is empty)`,
    start: (size) => `${firstPage}&cursor=${encodeCursor(PetId.make(size / 2))}`,
    follow: false,
  },
]

const measure = async (store: BenchStore, size: number, scenario: Scenario) => {
  await migrate(store)
  const seeding = performance.now()
  await store.run((sql) => Effect.zipRight(seed(sql, size, scenario.layout), analyze(sql)))
  console.error(
    `${store.engine}: ${size.toLocaleString("en")} pets (${scenario.layout}) seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s`,
  )
  const plan = await store.run(queryPlan)

  const runtime = ManagedRuntime.make(store.layer())
  const server = await serveInProcess(createApp({ runtime, apiKeys: [apiKey] }).callback())
  try {
    const timings = await timePages(server.origin, scenario.start(size), scenario.follow)
    return { plan, median: percentile(timings, 50), p99: percentile(timings, 99) }
  } finally {
    await server.close()
    await runtime.dispose()
  }
}

const engines = [async () => sqliteStore(), postgresStore]
const plans = new Map<string, string>()
console.log(
  `${requests} timed requests per row after ${warmup} warm-up, one at a time, over HTTP on 127.0.0.1`,
)
for (const scenario of scenarios) {
  const rows: Array<Array<string>> = []
  for (const open of engines) {
    const measured = []
    for (const size of sizes) {
      const store = await open()
      try {
        const result = await measure(store, size, scenario)
        measured.push(result)
        if (size === 1_000_000) plans.set(`${store.engine}, ${scenario.layout}`, result.plan)
        rows.push([
          store.engine,
          size.toLocaleString("en"),
          milliseconds(result.median),
          milliseconds(result.p99),
        ])
      } finally {
        await store.dispose()
      }
    }
    const [small, large] = measured
    if (small !== undefined && large !== undefined) {
      rows.push([
        "",
        "ratio 1M / 1k",
        `${(large.median / small.median).toFixed(2)}×`,
        `${(large.p99 / small.p99).toFixed(2)}×`,
      ])
    }
  }
  console.log(`\n${scenario.title}:\n`)
  console.log(table(["engine", "pets", "median", "p99"], rows))
}
console.log("\nPlans of the status query at 1,000,000 pets:\n")
for (const [store, plan] of plans) console.log(`- ${store}: ${plan}`)
