/**
 * The floors of each package's `src/`, lowest first. A file may import files on its own floor or
 * below, never above; `name/` is a folder, `name.ts` a file at the root of `src/`, and `*.ts` every
 * other file at that root. A file no floor names fails the check: a new folder takes a floor here.
 */
export const floors: Readonly<Record<string, ReadonlyArray<ReadonlyArray<string>>>> = {
  "packages/core/src": [["*.ts"], ["keys/", "testing/"], ["index.ts"]],
  "packages/storage/src": [["*.ts"], ["sql/", "testing/"], ["index.ts"]],
  "packages/storage-sqlite/src": [["SqlitePetRepository.ts"], ["testing/"], ["index.ts"]],
  "packages/storage-postgres/src": [["*.ts"], ["testing/"], ["index.ts"]],
  "packages/http/src": [
    // What every part speaks: error codes and bodies, header formats, request state, the logger.
    ["vocabulary/"],
    // Parts that know only the vocabulary and each other.
    ["body/", "request/", "limits/", "keys/", "observability/", "docs/", "codecs/"],
    ["operations/"],
    ["openapi/"],
    ["middleware/"],
    ["routes/"],
    // The app and the hardened Node server it is served with (`@petstore/http/node`): neither
    // knows the other.
    ["app.ts", "node/"],
    ["index.ts"],
  ],
  "packages/client/src": [["schema.ts"], ["index.ts"]],
  "apps/server/src": [
    ["shown-value.ts", "storage/", "logs/", "server/", "keys/", "tracing/", "backup/"],
    ["settings/"],
    ["cli/", "default-document.ts"],
    ["main.ts"],
  ],
}
