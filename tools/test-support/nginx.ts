import assert from "node:assert/strict"
import { spawn, type ChildProcess } from "node:child_process"
import { once } from "node:events"
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import path from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"

/** Debian's nginx (`nginx-light`), which `.ci/run` installs. */
export const nginxPath = "/usr/sbin/nginx"

/** Without nginx the tests are skipped, except in CI, where they must run. */
export const nginxMissing: string | false =
  existsSync(nginxPath) || process.env["CI"] === "true"
    ? false
    : `${nginxPath} is missing (Debian package nginx-light)`

/** The configuration an operator is given: deploy/nginx/petstore.conf. */
const shippedNginxConfig = readFileSync(
  fileURLToPath(new URL("../../deploy/nginx/petstore.conf", import.meta.url)),
  "utf8",
)

/** The requests the shipped configuration gives each instance at once (its `max_conns`). */
const shippedMaxConns = Number(/max_conns=(\d+)/.exec(shippedNginxConfig)?.[1])

/**
 * The settings of the instances behind the shipped configuration, as its header gives them: nginx
 * trusted, and admission control refusing only past the queue `max_conns` allows.
 */
export const behindNginxSettings = {
  PETSTORE_TRUST_PROXY: "loopback",
  PETSTORE_OVERLOAD_TARGET: "300ms",
  PETSTORE_OVERLOAD_INTERVAL: "1s",
}

/** `max_conns` by the README's rule: what an instance serves in a quarter second at its peak. */
export const maxConnsFor = (capacityPerSecond: number): number =>
  Math.max(1, Math.round(capacityPerSecond * 0.25))

/** The idle connections each worker of the shipped configuration keeps (its `keepalive`). */
const shippedKeepalive = Number(/keepalive (\d+);/.exec(shippedNginxConfig)?.[1])

/**
 * The shipped configuration, unchanged but for its instances (one `server` line for each port
 * given, as an operator writes one per instance), its own port, and, if given, each instance's
 * `max_conns`, with `keepalive` raised to max_conns times the instances if it is less, as its
 * comment says.
 */
export const shippedNginx = (
  instancePorts: ReadonlyArray<number>,
  port: number,
  maxConns = shippedMaxConns,
): string => {
  const keepalive = Math.max(shippedKeepalive, maxConns * instancePorts.length)
  const serverLines = /^ *server 127\.0\.0\.1:8081 .*\n *server 127\.0\.0\.1:8082 .*\n/m
  const example = serverLines.exec(shippedNginxConfig)?.[0]
  assert.ok(example !== undefined, "the shipped configuration has no two example instances")
  const line = (example.split("\n")[0] ?? "").replace(/max_conns=\d+/, `max_conns=${maxConns}`)
  assert.match(line, /max_conns=/, "the shipped configuration's instances have no max_conns")
  const listen = "listen 80;"
  assert.equal(
    shippedNginxConfig.split(listen).length,
    2,
    `the shipped configuration has no one "${listen}"`,
  )
  return shippedNginxConfig
    .replace(
      example,
      instancePorts.map((instance) => `${line.replace(":8081 ", `:${instance} `)}\n`).join(""),
    )
    .replace(listen, `listen 127.0.0.1:${port};`)
    .replace(`keepalive ${shippedKeepalive};`, `keepalive ${keepalive};`)
}

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

/** How nginx itself runs: as in the tests unless a benchmark says otherwise. */
export interface NginxProcess {
  /** Its workers; 2, as `auto` makes it on this 2-core machine. */
  readonly workers?: number
  /** The core its workers are pinned to, if any (a benchmark keeps it off the server's). */
  readonly core?: number
  /** Connections each worker may hold, clients' and instances' together; 1024. */
  readonly connections?: number
  /** One line per request in `accessLog()`; a benchmark turns it off. */
  readonly accessLog?: boolean
}

/**
 * Runs nginx of its own, in the foreground, with everything (configuration, logs, temporary
 * files, pid) in a directory of its own; `http` is the inside of the `http` block, listening on
 * 127.0.0.1:`port`. Resolves once nginx accepts connections there.
 */
export const startNginx = async (
  http: string,
  port: number,
  { workers = 2, core, connections = 1024, accessLog = true }: NginxProcess = {},
): Promise<RunningNginx> => {
  assert.ok(existsSync(nginxPath), `${nginxPath} is missing; CI must run the nginx tests`)
  const directory = mkdtempSync(path.join(tmpdir(), "petstore-nginx-"))
  const file = (name: string) => path.join(directory, name)
  writeFileSync(
    file("nginx.conf"),
    [
      `worker_processes ${workers};`,
      ...(core === undefined
        ? []
        : [
            `worker_cpu_affinity ${Array.from({ length: workers }, () => `1${"0".repeat(core)}`).join(" ")};`,
          ]),
      ...(connections > 1024 ? [`worker_rlimit_nofile ${connections * 2};`] : []),
      `events { worker_connections ${connections}; }`,
      "http {",
      "  log_format upstreams '$msec $request_method $status $upstream_addr $upstream_status';",
      `  access_log ${accessLog ? `${file("access.log")} upstreams` : "off"};`,
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
