import { bodyParser } from "@koa/bodyparser"
import { createApp } from "@petstore/http"
import { closeGracefully, createServer, listen } from "@petstore/http/node"
import { MemoryPetRepository } from "@petstore/storage"
import { ManagedRuntime } from "effect"
import Koa from "koa"
import mount from "koa-mount"

// The runtime provides the store to the app; the host owns it, and disposes of it last.
const runtime = ManagedRuntime.make(MemoryPetRepository.layer)
const petstore = createApp({ runtime, apiKeys: [process.env.PETSTORE_API_KEY ?? "dev-key"] })

const host = new Koa()
// Mounted before the host's body parser: the app reads its own bodies, so every error it
// answers is its Error body. (Behind a parser it still works, but the parser answers the bodies
// it refuses itself: see the README.)
host.use(mount("/petstore", petstore))
host.use(bodyParser())

// The hardened server `npm start` runs: Node's own refusals as Error bodies, slow clients cut,
// connections bounded, request smuggling refused.
const server = createServer(host)
const port = await listen(server, Number(process.env.PORT ?? 3000), "127.0.0.1")
console.log(`Petstore API on http://localhost:${port}/petstore/v1, docs at /petstore/docs`)
process.once("SIGTERM", () => {
  void closeGracefully(server, 10_000).then(() => runtime.dispose())
})
