import { bodyParser } from "@koa/bodyparser"
import { createApp } from "@petstore/http"
import { MemoryPetRepository } from "@petstore/storage"
import { ManagedRuntime } from "effect"
import Koa from "koa"
import mount from "koa-mount"

// The runtime provides the store to the app; the host owns it, and disposes of it last.
const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
const petstore = createApp({ runtime, apiKeys: [process.env.PETSTORE_API_KEY ?? "dev-key"] })

const host = new Koa()
host.use(bodyParser())
host.use(mount("/petstore", petstore))

const port = Number(process.env.PORT ?? 3000)
const server = host.listen(port, () => {
  console.log(`Petstore API on http://localhost:${port}/petstore/v1, docs at /petstore/docs`)
})
process.on("SIGTERM", () => {
  server.close(() => void runtime.dispose())
})
