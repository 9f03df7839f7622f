/**
 * Where a lone durable create's CPU goes below HTTP: one process, one SQLite file (WAL,
 * `synchronous=FULL`, the service's schema), creates one after another, each measured at a layer
 * of the stack and the layers interleaved round by round, so each layer's cost over the one below
 * it is read off the same run:
 *
 * - `driver`: better-sqlite3 alone running the service's `INSERT … RETURNING` (SQLite makes it a
 *   transaction of its own, as it does the service's batch without keys);
 * - `connection`: that statement through @effect/sql's connection, held reserved: its
 *   prepared-statement cache and driver call, in a fiber;
 * - `statement`: through the `SqlClient`, as the repository runs it (span off): a connection
 *   acquired and released per statement;
 * - `repository`: `PetRepository.create`, the group commit included;
 * - `use case`: `createPet`, as the HTTP handler runs it.
 *
 * lone-creates.ts runs it under `taskset -c <core>`. Prints
 * `{"creates":…,"layers":[{"name":…,"cpuMicros":[…one per round]}]}`.
 *
 *   node --import tsx durable-create-layers.ts <directory> <rounds> <creates per round>
 */
import { mkdtempSync, rmSync } from "node:fs"
import path from "node:path"
import * as SqlClient from "@effect/sql/SqlClient"
import { CategoryId, createPet, NewPet, PetRepository } from "@petstore/core"
import { SqlPetRepository } from "@petstore/storage/sql"
import { SqlitePetRepository } from "@petstore/storage-sqlite"
import Database from "better-sqlite3"
import { Effect, Exit, Layer, ManagedRuntime, Scope } from "effect"
import { serviceInsert } from "./service-insert.js"

const [directoryText = "", roundsText = "3", createsText = "2000"] = process.argv.slice(2)
const rounds = Number(roundsText)
const creates = Number(createsText)
const directory = mkdtempSync(path.join(directoryText, "layers-"))
const filename = path.join(directory, "layers.db")

const pet = NewPet.make({ name: "Rex", categoryId: CategoryId.make(1), status: "available" })
const insertParams = [pet.name, pet.categoryId, pet.status ?? null]

const client = Layer.scoped(SqlClient.SqlClient, SqlitePetRepository.makeClient({ filename }))
const repository = Layer.scoped(PetRepository, SqlPetRepository.make()).pipe(
  Layer.provideMerge(client),
)
const runtime = ManagedRuntime.make(repository)

/** Runs an effect as the service runs a request's: a fiber of its own on the runtime. */
const run = <A, E>(effect: Effect.Effect<A, E, PetRepository | SqlClient.SqlClient>) =>
  new Promise<void>((resolve, reject) =>
    runtime
      .runFork(effect)
      .addObserver((exit) => (Exit.isSuccess(exit) ? resolve() : reject(new Error(String(exit))))),
  )

const sql = await runtime.runPromise(SqlClient.SqlClient)
const untraced = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.withTracerEnabled(Effect.provideService(effect, SqlClient.SafeIntegers, true), false)

const driver = new Database(filename)
driver.pragma("synchronous = FULL")
const insert = driver.prepare(serviceInsert).safeIntegers(true)

interface StackLayer {
  readonly name: string
  /** Makes what the layer's creates need for one round, and the create itself. */
  readonly open: () => Promise<{
    readonly create: () => unknown
    readonly close: () => Promise<void>
  }>
}
const nothingToClose = async () => {}
const opened = (create: () => unknown) => async () => ({ create, close: nothingToClose })

/** The connection is reserved for the round: it holds the client's only permit meanwhile. */
const reservedConnection = async () => {
  const reservation = await runtime.runPromise(Scope.make())
  const connection = await runtime.runPromise(Scope.extend(sql.reserve, reservation))
  return {
    create: () => run(untraced(connection.execute(serviceInsert, insertParams, undefined))),
    close: () => runtime.runPromise(Scope.close(reservation, Exit.void)),
  }
}

const layers: ReadonlyArray<StackLayer> = [
  { name: "driver", open: opened(() => insert.all(...insertParams)) },
  { name: "connection", open: reservedConnection },
  {
    name: "statement",
    open: opened(() =>
      run(
        untraced(
          sql`INSERT INTO pets ${sql.insert({ name: pet.name, category_id: pet.categoryId, status: pet.status ?? null })} RETURNING id, name, category_id AS "categoryId", status`,
        ),
      ),
    ),
  },
  {
    name: "repository",
    open: opened(() => run(Effect.flatMap(PetRepository, (pets) => pets.create(pet)))),
  },
  { name: "use case", open: opened(() => run(createPet(pet))) },
]

const cpuMicros = new Map<string, Array<number>>(layers.map(({ name }) => [name, []]))
for (let round = 1; round <= rounds; round++) {
  for (const layer of layers) {
    const { create, close } = await layer.open()
    // Warms the JIT on this layer's code before its CPU time is read; the first round, longer.
    for (let index = 0; index < (round === 1 ? creates : creates / 4); index++) await create()
    const before = process.cpuUsage()
    for (let index = 0; index < creates; index++) await create()
    const used = process.cpuUsage(before)
    await close()
    cpuMicros.get(layer.name)?.push((used.user + used.system) / creates)
  }
}

driver.close()
await runtime.dispose()
rmSync(directory, { recursive: true, force: true })
process.stdout.write(
  `${JSON.stringify({ creates, layers: layers.map(({ name }) => ({ name, cpuMicros: cpuMicros.get(name) ?? [] })) })}\n`,
)
