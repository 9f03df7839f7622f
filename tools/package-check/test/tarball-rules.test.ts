import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { brokenSourceMapReferences, missingFiles, unexpectedFiles } from "../lib/tarball-rules.js"

describe("unexpectedFiles", () => {
  it("keeps compiled JS, declarations, their maps and the three package files", () => {
    const files = [
      "LICENSE",
      "README.md",
      "package.json",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/index.js.map",
      "dist/index.d.ts.map",
      "dist/testing/index.js",
    ]
    assert.deepEqual(unexpectedFiles(files), [])
    assert.deepEqual(missingFiles(files), [])
  })

  it("names sources, tests, configs and build info", () => {
    const files = [
      "src/index.ts",
      "dist/index.ts",
      "test/a.test.ts",
      "dist/a.test.js",
      "dist/test/helper.js",
      "tsconfig.json",
      "dist/tsconfig.build.tsbuildinfo",
      "CHANGELOG.md",
    ]
    assert.deepEqual(unexpectedFiles(files), files)
    assert.deepEqual(missingFiles(files), ["package.json", "README.md", "LICENSE"])
  })
})

describe("brokenSourceMapReferences", () => {
  const map = (sources: ReadonlyArray<string>, sourcesContent?: ReadonlyArray<string>) =>
    JSON.stringify({ version: 3, file: "index.js", sources, sourcesContent, mappings: "" })

  it("accepts maps whose sources are shipped or carried inline, and inline maps", () => {
    const files: Record<string, string> = {
      "dist/index.js": "export {}\n//# sourceMappingURL=index.js.map",
      "dist/index.js.map": map(["../src/index.ts"], ["export {}\n"]),
      "dist/a.js": "export {}\n//# sourceMappingURL=a.js.map",
      "dist/a.js.map": map(["a.js"]),
      "dist/b.js": "export {}\n//# sourceMappingURL=data:application/json;base64,e30=",
    }
    assert.deepEqual(
      brokenSourceMapReferences(Object.keys(files), (file) => files[file] ?? ""),
      [],
    )
  })

  it("names a missing map and a source neither shipped nor inline", () => {
    const files: Record<string, string> = {
      "dist/index.js": "export {}\n//# sourceMappingURL=index.js.map",
      "dist/a.js": "export {}\n//# sourceMappingURL=a.js.map",
      "dist/a.js.map": map(["../src/a.ts"]),
    }
    assert.deepEqual(
      brokenSourceMapReferences(Object.keys(files), (file) => files[file] ?? ""),
      ["dist/index.js → dist/index.js.map", "dist/a.js.map → src/a.ts"],
    )
  })
})
