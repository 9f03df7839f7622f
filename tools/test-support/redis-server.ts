import { spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"
import { Redis } from "ioredis"

/** The shared Redis every machine here runs; tests only add keys under a prefix of their own. */
export const sharedRedisUrl = "redis://127.0.0.1:6379"

/** A port of 127.0.0.1 that nothing listened on a moment ago. */
export const freePort = async (): Promise<number> => {
  const server = createServer()
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  server.close()
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

/** A `redis-server` of the test's own, which the test may stop, pause and start again. */
export interface OwnRedis {
  readonly url: string
  /** Kills it (SIGKILL): the server vanishes mid-conversation. */
  readonly kill: () => Promise<void>
  /** Starts it again on the same port, empty. */
  readonly restart: () => Promise<void>
  /** SIGSTOP: connections stay open and nothing answers. */
  readonly pause: () => void
  readonly resume: () => void
}

const running = new Set<ChildProcess>()
process.on("exit", () => running.forEach((child) => child.kill("SIGKILL")))

const answersPing = async (url: string) => {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on("error", () => {})
  try {
    await client.connect()
    return (await client.ping()) === "PONG"
  } catch {
    return false
  } finally {
    client.disconnect()
  }
}

/** Starts `redis-server` on a free port of 127.0.0.1, keeping nothing on disk. */
export const startOwnRedis = async (): Promise<OwnRedis> => {
  const port = await freePort()
  const url = `redis://127.0.0.1:${port}`
  let child: ChildProcess | undefined
  const start = async () => {
    const started = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    )
    running.add(started)
    started.once("exit", () => running.delete(started))
    child = started
    for (let attempt = 0; attempt < 100; attempt++) {
      if (await answersPing(url)) return
      await sleep(50)
    }
    throw new Error(`redis-server on port ${port} did not answer`)
  }
  const kill = async () => {
    const stopping = child
    if (stopping === undefined || stopping.exitCode !== null) return
    const exited = once(stopping, "exit")
    stopping.kill("SIGKILL")
    await exited
  }
  await start()
  return {
    url,
    kill,
    restart: start,
    pause: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
  }
}
