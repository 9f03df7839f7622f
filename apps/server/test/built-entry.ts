import { fileURLToPath } from "node:url"

/**
 * The command that runs one of the process's entry points as operators run it: the built
 * JavaScript under dist/, as `npm start`, `npm run keys` and `npm run storage` do (`npm test`
 * builds it first; see turbo.json). Started from the sources through tsx, each process took about
 * 0.8 s longer to start, and the suite starts a few hundred.
 */
export const builtEntry = (name: "main" | "cli/keys" | "cli/storage"): ReadonlyArray<string> => [
  fileURLToPath(new URL(`../dist/${name}.js`, import.meta.url)),
]
