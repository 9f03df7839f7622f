import assert from "node:assert/strict"
import { spawn } from "node:child_process"
import { once } from "node:events"
import { describe, it } from "node:test"
import { fileURLToPath } from "node:url"
import { cpuQuota, cpuQuotaUnavailable } from "@petstore/test-support/cpu-quota"
import { loopThreadRunnableMs } from "../../src/node/loop-thread.js"

/**
 * `loopThreadRunnableMs` counts the time the loop's thread wanted a CPU: computing, or ready and
 * held back (here by a CPU quota's freeze), and not the time it was blocked in a system call.
 */

const spin = (ms: number) => {
  const until = performance.now() + ms
  while (performance.now() < until) {
    // Computing, as a request's work does.
  }
}

/** Blocks the thread without computing, as a synchronous `fsync` on a busy disk does. */
const block = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

/** How much `loopThreadRunnableMs` grew over `work`, and how long `work` took. */
const measure = (work: () => void) => {
  const startedAt = performance.now()
  const before = loopThreadRunnableMs()
  work()
  return { runnable: loopThreadRunnableMs() - before, wall: performance.now() - startedAt }
}

const unavailable = cpuQuotaUnavailable()
const skipQuota = unavailable === undefined || process.env["CI"] === "true" ? false : unavailable
const module = fileURLToPath(new URL("../../src/node/loop-thread.ts", import.meta.url))

describe("loopThreadRunnableMs", () => {
  it("grows by the time the thread computes", () => {
    const { runnable, wall } = measure(() => spin(300))
    assert.ok(runnable >= 0.8 * wall, `${runnable} ms of ${wall}`)
    assert.ok(runnable <= wall + 5, `${runnable} ms of ${wall}`)
  })

  it("does not grow while the thread is blocked", () => {
    const { runnable, wall } = measure(() => block(300))
    assert.ok(wall >= 290, `${wall}`)
    assert.ok(runnable < 0.1 * wall, `${runnable} ms of ${wall}`)
  })

  it(
    "counts a CPU quota's freezes as time the thread wanted a CPU",
    { skip: skipQuota },
    async () => {
      assert.equal(unavailable, undefined, `no CPU quota can be made here: ${unavailable}`)
      const quota = cpuQuota("petstore-test-loop-thread", 0.2)
      assert.ok(typeof quota !== "string", `no CPU quota can be made here: ${quota}`)
      try {
        // Spins 600 ms of wall time once told to, in the group: it runs a fifth of that.
        const script = `
        import(${JSON.stringify(module)}).then(({ loopThreadRunnableMs }) => {
          process.stdin.once("data", () => {
            const startedAt = performance.now()
            const before = loopThreadRunnableMs()
            const cpu = process.cpuUsage()
            while (performance.now() < startedAt + 600) {}
            const { user, system } = process.cpuUsage(cpu)
            const runnable = loopThreadRunnableMs() - before
            console.log(runnable, performance.now() - startedAt, (user + system) / 1000)
            process.exit(0)
          })
          console.log("ready")
        })`
        const child = spawn(process.execPath, ["--import", "tsx", "-e", script], {
          stdio: ["pipe", "pipe", "inherit"],
        })
        let output = ""
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
        while (!output.includes("ready")) await once(child.stdout, "data")
        quota.add(child.pid ?? 0)
        child.stdin.write("go\n")
        await once(child, "exit")
        // "<runnable ms> <wall ms> <CPU ms>"
        const [runnable = 0, wall = 0, cpu = 0] = (output.split("\n")[1] ?? "")
          .split(" ")
          .map(Number)
        assert.ok(wall >= 590, output)
        assert.ok(cpu < 0.5 * wall, `not held: ${cpu} ms of CPU in ${wall}`)
        assert.ok(runnable >= 0.8 * wall, `${runnable} ms of ${wall}`)
      } finally {
        quota.remove()
      }
    },
  )
})
