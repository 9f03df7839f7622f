// Preloaded into a server process (`NODE_OPTIONS=--import=<this file>`) by tracing.test.ts, in
// plain JavaScript since it runs before tsx is registered: when the process exits, writes the
// files of the OpenTelemetry packages it loaded to the file PETSTORE_TEST_LOADED_MODULES names.
// Those packages are CommonJS, so every file of theirs is in the require cache once loaded,
// whether by `require` or by `import`.
import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const target = process.env["PETSTORE_TEST_LOADED_MODULES"]

if (target !== undefined) {
  process.on("exit", () => {
    const loaded = Object.keys(require.cache).filter((file) =>
      file.includes("/node_modules/@opentelemetry/"),
    )
    writeFileSync(target, JSON.stringify(loaded))
  })
}
