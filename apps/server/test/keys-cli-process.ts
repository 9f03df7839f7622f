import { spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { builtEntry } from "./built-entry.js"

const appDirectory = fileURLToPath(new URL("..", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `npm run keys -- <args>` (the built CLI), with this `PETSTORE_STORAGE`. */
export const runKeysCli = async (
  args: ReadonlyArray<string>,
  storage: string,
): Promise<CliResult> => {
  const child = spawn(process.execPath, [...builtEntry("cli/keys"), ...args], {
    cwd: appDirectory,
    env: { PATH: process.env["PATH"] ?? "", PETSTORE_STORAGE: storage },
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
  const [code] = await once(child, "exit")
  clearTimeout(timer)
  return { code: typeof code === "number" ? code : null, stdout, stderr }
}

/** The key `create` printed: alone on the last line of its output. */
export const createdKey = (result: CliResult): string => {
  const last = result.stdout.trimEnd().split("\n").at(-1) ?? ""
  if (!/^pst_[0-9A-Za-z]{49}$/.test(last)) {
    throw new Error(`create did not end with a key:\n${result.stdout}\n${result.stderr}`)
  }
  return last
}

/** The id `create` printed for the key. */
export const createdId = (result: CliResult): string => {
  const id = /\b(key_[0-9a-f]{16})\b/.exec(result.stdout)?.[1]
  if (id === undefined) throw new Error(`create named no id:\n${result.stdout}`)
  return id
}
