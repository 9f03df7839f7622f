import { readFile } from "node:fs/promises"
import { publint } from "publint"
import { formatMessage } from "publint/utils"
import { run, type Finished } from "./processes.js"
import { binPath } from "./workspace.js"

export interface PublintReport {
  /** Errors and warnings: either fails the check. */
  readonly problems: ReadonlyArray<string>
  readonly suggestions: ReadonlyArray<string>
}

/** publint on the tarball itself, so it judges exactly the files npm would publish. */
export const publintTarball = async (tarball: string): Promise<PublintReport> => {
  const bytes = new Uint8Array(await readFile(tarball))
  const { messages, pkg } = await publint({ pack: { tarball: bytes.buffer }, level: "suggestion" })
  const describe = (type: string) =>
    messages
      .filter((message) => message.type === type)
      .map(
        (message) =>
          `${message.type}: ${formatMessage(message, pkg, { color: false }) ?? message.code}`,
      )
  return {
    problems: [...describe("error"), ...describe("warning")],
    suggestions: describe("suggestion"),
  }
}

/**
 * Are the Types Wrong on the tarball, for ESM-only packages: every entry point must resolve to
 * types and JavaScript under `node16` from ESM and under `bundler`. Exits non-zero on a problem.
 */
export const attwTarball = async (tarball: string, cwd: string): Promise<Finished> =>
  run(
    process.execPath,
    [
      await binPath("@arethetypeswrong/cli", "attw"),
      tarball,
      "--profile",
      "esm-only",
      "--no-definitely-typed",
      "--format",
      "ascii",
      "--no-color",
    ],
    { cwd, timeoutMs: 60_000, lowPriority: true },
  )
