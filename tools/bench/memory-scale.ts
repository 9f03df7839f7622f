/**
 * The in-memory adapter's listing at 1,000 and 1,000,000 pets, beside a baseline that filters
 * every pet for each page (what a plain array store does). Repository calls only, no HTTP.
 *
 *   npm run memory-scale -w @petstore/bench
 */
import { CategoryId, Limit, NewPet, PetRepository, type Pet, type PetStatus } from "@petstore/core"
import { MemoryPetRepository } from "@petstore/storage"
import { Effect, Option } from "effect"
import { percentile, table } from "./statistics.js"

const statuses: ReadonlyArray<PetStatus> = ["available", "pending", "sold", "sold"]
const pageSize = Limit.make(100)
const timedPages = 2000

type ListPage = (afterId: Pet["id"] | undefined) => ReadonlyArray<Pet>

/** Median and p99 microseconds per page of `status=sold`, following the cursor and wrapping. */
const timePages = (listPage: ListPage) => {
  const samples: Array<number> = []
  let afterId: Pet["id"] | undefined
  for (let i = 0; i < timedPages + 100; i++) {
    const started = performance.now()
    const page = listPage(afterId)
    if (i >= 100) samples.push((performance.now() - started) * 1000)
    afterId = page.length === pageSize ? page[page.length - 1]?.id : undefined
  }
  return { median: percentile(samples, 50), p99: percentile(samples, 99) }
}

const seeded = (size: number) =>
  Effect.runSync(
    Effect.gen(function* () {
      const repository = yield* PetRepository
      const pets: Array<Pet> = []
      for (let i = 0; i < size; i++) {
        const status = statuses[i % statuses.length]
        pets.push(
          yield* repository.create(
            NewPet.make({
              name: `pet ${i}`,
              categoryId: CategoryId.make(i % 10),
              ...(status ? { status } : {}),
            }),
          ),
        )
      }
      return { repository, pets }
    }).pipe(Effect.provide(MemoryPetRepository.layer)),
  )

const rows: Array<Array<string>> = []
const results = new Map<string, { median: number; p99: number }>()
for (const size of [1_000, 1_000_000]) {
  const { repository, pets } = seeded(size)
  const adapter = timePages((afterId) =>
    Effect.runSync(
      Effect.map(
        repository.list({
          status: Option.some("sold"),
          afterId: Option.fromNullable(afterId),
          limit: pageSize,
        }),
        (page) => page.pets,
      ),
    ),
  )
  const baseline = timePages((afterId) =>
    pets.filter((pet) => pet.status === "sold" && pet.id > (afterId ?? 0)).slice(0, pageSize),
  )
  results.set(`adapter ${size}`, adapter)
  results.set(`baseline ${size}`, baseline)
  for (const [name, timing] of [
    ["MemoryPetRepository", adapter],
    ["filter every pet (baseline)", baseline],
  ] as const) {
    rows.push([
      name,
      size.toLocaleString("en"),
      `${timing.median.toFixed(1)} µs`,
      `${timing.p99.toFixed(1)} µs`,
    ])
  }
}
const ratio = (name: string) => {
  const small = results.get(`${name} 1000`)
  const large = results.get(`${name} 1000000`)
  return small && large ? `${(large.median / small.median).toFixed(2)}×` : "?"
}
console.log(
  `list({ status: sold, afterId, limit: ${pageSize} }), ${timedPages} pages after 100 warm-up\n`,
)
console.log(table(["store", "pets", "median", "p99"], rows))
console.log(`\nmedian 1M / 1k: adapter ${ratio("adapter")}, baseline ${ratio("baseline")}`)
