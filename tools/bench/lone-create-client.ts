/**
 * Creates sent one after another over one kept-alive connection, each timed from its request to
 * the end of its 201, for the durable creates at one connection (lone-creates.ts starts it under
 * `taskset -c 1`). Prints `{"latenciesMicros":[…]}` for the measured ones.
 *
 *   node --import tsx lone-create-client.ts <origin> <api key> <warm-up count> <count>
 */
import { Agent, request } from "node:http"

const [origin = "", apiKey = "", warmupText = "0", countText = "0"] = process.argv.slice(2)
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const body = JSON.stringify({ name: "Rex", categoryId: 1, status: "available" })
const url = new URL("/v1/pets", origin)

const create = () =>
  new Promise<void>((resolve, reject) => {
    const sent = request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          Authorization: `Bearer ${apiKey}`,
          "Content-Type": "application/json",
          "Content-Length": Buffer.byteLength(body),
        },
      },
      (response) => {
        response.resume()
        response.once("end", () =>
          response.statusCode === 201
            ? resolve()
            : reject(new Error(`a create answered ${response.statusCode}`)),
        )
      },
    )
    sent.once("error", reject)
    sent.end(body)
  })

for (let i = 0; i < Number(warmupText); i++) await create()
const latenciesMicros: Array<number> = []
for (let i = 0; i < Number(countText); i++) {
  const started = performance.now()
  await create()
  latenciesMicros.push((performance.now() - started) * 1000)
}
agent.destroy()
process.stdout.write(`${JSON.stringify({ latenciesMicros })}\n`)
