/**
 * Run as a process of its own by group-commit.ts, so the clients do not share the server's
 * event loop: `concurrency` clients POST pets back to back for `seconds`, while one more lists
 * sold pets every millisecond. Prints the latencies as JSON.
 *
 *   node --import tsx load-generator.ts <origin> <api key> <concurrency> <seconds>
 */
import { Agent, request } from "node:http"

const [origin = "", apiKey = "", concurrencyText = "1", secondsText = "3"] = process.argv.slice(2)
const concurrency = Number(concurrencyText)
const deadline = performance.now() + Number(secondsText) * 1000
const agent = new Agent({ keepAlive: true, maxSockets: concurrency + 1 })
const newPet = JSON.stringify({ name: "Rex", categoryId: 1, status: "sold" })

const send = (method: string, path: string, body?: string) =>
  new Promise<number>((resolve, reject) => {
    const headers: Record<string, string | number> = { Authorization: `Bearer ${apiKey}` }
    if (body !== undefined) {
      headers["Content-Type"] = "application/json"
      headers["Content-Length"] = Buffer.byteLength(body)
    }
    const outgoing = request(`${origin}${path}`, { method, agent, headers }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode ?? 0))
    })
    outgoing.on("error", reject)
    outgoing.end(body)
  })

const timedLoop = async (send: () => Promise<number>, expected: number, pauseMs = 0) => {
  const timings: Array<number> = []
  while (performance.now() < deadline) {
    const started = performance.now()
    const status = await send()
    if (status !== expected) throw new Error(`status ${status}, expected ${expected}`)
    timings.push(performance.now() - started)
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
  }
  return timings
}

const [creates, reads] = await Promise.all([
  Promise.all(
    Array.from({ length: concurrency }, () =>
      timedLoop(() => send("POST", "/v1/pets", newPet), 201),
    ),
  ),
  timedLoop(() => send("GET", "/v1/pets?status=sold&limit=100"), 200, 1),
])
agent.destroy()
process.stdout.write(JSON.stringify({ creates: creates.flat(), reads }))
