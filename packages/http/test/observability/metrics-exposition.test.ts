import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { Counter, Gauge, Registry } from "prom-client"
import { parseExposition, sampleValue } from "@petstore/test-support/prometheus-text"
import { metricsExposition } from "../../src/index.js"

/** A registry with one counter, and how many times it was rendered. */
const countedRegistry = () => {
  const registry = new Registry()
  const counter = new Counter({ name: "things_total", help: "Things.", registers: [registry] })
  const renders = { count: 0, failNext: false }
  new Gauge({
    name: "renders",
    help: "Renderings so far.",
    registers: [registry],
    collect() {
      renders.count += 1
      if (renders.failNext) {
        renders.failNext = false
        throw new Error("collect failed")
      }
      this.set(renders.count)
    },
  })
  return { registry, counter, renders }
}

const things = (text: string) => sampleValue(parseExposition(text), "things_total")

describe("metricsExposition", () => {
  it("serves one rendering again within reuseMs, though a counter changed, then renders anew", async () => {
    const { registry, counter, renders } = countedRegistry()
    let now = 5_000
    const exposition = metricsExposition(registry, { reuseMs: 1_000, now: () => now })
    const first = await exposition.render()
    counter.inc()
    now += 999
    assert.equal(await exposition.render(), first)
    assert.equal(things(first), 0)
    now += 1
    const later = await exposition.render()
    assert.equal(things(later), 1)
    assert.equal(renders.count, 2)
  })

  it("renders once for scrapes that come while a rendering is being made", async () => {
    const { registry, renders } = countedRegistry()
    const exposition = metricsExposition(registry, { reuseMs: 1_000, now: () => 0 })
    const texts = await Promise.all(Array.from({ length: 20 }, () => exposition.render()))
    assert.equal(renders.count, 1)
    assert.equal(new Set(texts).size, 1)
  })

  it("renders at every scrape unless reuseMs is given", async () => {
    const { registry, counter, renders } = countedRegistry()
    const exposition = metricsExposition(registry, { now: () => 0 })
    await exposition.render()
    counter.inc()
    assert.equal(things(await exposition.render()), 1)
    assert.equal(renders.count, 2)
  })

  it("does not serve a rendering that failed again", async () => {
    const { registry, renders } = countedRegistry()
    const exposition = metricsExposition(registry, { reuseMs: 1_000, now: () => 0 })
    renders.failNext = true
    await assert.rejects(exposition.render(), /collect failed/)
    assert.equal(things(await exposition.render()), 0)
    assert.equal(renders.count, 2)
  })

  it("has the registry's content type", () => {
    const { registry } = countedRegistry()
    assert.equal(metricsExposition(registry).contentType, registry.contentType)
  })
})
