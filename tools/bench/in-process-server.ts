import { createServer, type RequestListener } from "node:http"

export interface InProcessServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** Stops listening and ends every connection, idle keep-alive ones included. */
  readonly close: () => Promise<void>
}

/**
 * Serves a request listener (`app.callback()`) on an ephemeral port of 127.0.0.1 with a plain
 * `node:http` server: what these benchmarks measure is the app and its storage, in this process.
 */
export const serveInProcess = (listener: RequestListener): Promise<InProcessServer> =>
  new Promise((resolve, reject) => {
    const server = createServer(listener)
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      if (address === null || typeof address === "string") {
        reject(new Error(`listening on ${String(address)}, not on a TCP port`))
        return
      }
      resolve({
        origin: `http://127.0.0.1:${address.port}`,
        close: () =>
          new Promise<void>((closed, failed) => {
            server.close((error) => (error === undefined ? closed() : failed(error)))
            server.closeAllConnections()
          }),
      })
    })
  })
