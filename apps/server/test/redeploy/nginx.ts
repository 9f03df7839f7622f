import assert from "node:assert/strict"
import { spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"

/** Debian's nginx (`nginx-light`), which `.ci/run` installs. */
export const nginxPath = "/usr/sbin/nginx"

/** Without nginx the tests are skipped, except in CI, where they must run. */
export const nginxMissing: string | false =
  existsSync(nginxPath) || process.env["CI"] === "true"
    ? false
    : `${nginxPath} is missing (Debian package nginx-light)`

/** The uid and gid of `nobody`: nginx runs unprivileged, as a test has no business being root. */
const nobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined

const running = new Set<ChildProcess>()
// A test that fails midway must not leave nginx behind.
process.on("exit", () => running.forEach((child) => child.kill("SIGKILL")))

export interface RunningNginx {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  /** One line per request: time, method, status, and each instance tried with its status. */
  readonly accessLog: () => string
  readonly errorLog: () => string
  /** Stops nginx (SIGTERM), waits for its exit, and removes its directory. */
  readonly stop: () => Promise<void>
}

const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/**
 * Runs nginx of its own, in the foreground, with everything (configuration, logs, temporary
 * files, pid) in a directory of its own; `http` is the inside of the `http` block, listening on
 * 127.0.0.1:`port`. Resolves once nginx accepts connections there.
 */
export const startNginx = async (http: string, port: number): Promise<RunningNginx> => {
  assert.ok(existsSync(nginxPath), `${nginxPath} is missing; CI must run the nginx tests`)
  const directory = mkdtempSync(path.join(tmpdir(), "petstore-nginx-"))
  const file = (name: string) => path.join(directory, name)
  writeFileSync(
    file("nginx.conf"),
    [
      // As `auto` makes it on this 2-core machine: workers each keep their own idle connections.
      "worker_processes 2;",
      "events { worker_connections 1024; }",
      "http {",
      "  log_format upstreams '$msec $request_method $status $upstream_addr $upstream_status';",
      `  access_log ${file("access.log")} upstreams;`,
      // Debian's build keeps them under /var/lib/nginx, which is not this nginx's.
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(
        (kind) => `  ${kind}_temp_path ${file(`${kind}-temp`)};`,
      ),
      http,
      "}",
      "",
    ].join("\n"),
  )
  if (nobody !== undefined) chownSync(directory, nobody.uid, nobody.gid)
  const child = spawn(
    nginxPath,
    [
      "-p",
      directory,
      "-c",
      file("nginx.conf"),
      "-e",
      file("error.log"),
      "-g",
      `daemon off; pid ${file("nginx.pid")}; error_log ${file("error.log")} warn;`,
    ],
    { stdio: ["ignore", "ignore", "pipe"], ...nobody },
  )
  running.add(child)
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = once(child, "exit").then(() => running.delete(child))
  const read = (name: string) => (existsSync(file(name)) ? readFileSync(file(name), "utf8") : "")
  const until = performance.now() + 10_000
  while (!(await accepts(port))) {
    assert.equal(child.exitCode, null, `nginx exited: ${stderr}${read("error.log")}`)
    assert.ok(performance.now() < until, `nginx not listening after 10 s: ${stderr}`)
    await sleep(50)
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    accessLog: () => read("access.log"),
    errorLog: () => read("error.log"),
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM")
        await exited
      }
      rmSync(directory, { recursive: true, force: true })
    },
  }
}
