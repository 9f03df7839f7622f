import { createHash } from "node:crypto"

/** A file the docs page needs, held in memory with what its response carries. */
export interface StaticAsset {
  /** The file name, also the last segment of its URL under `/docs/`. */
  readonly name: string
  readonly contentType: string
  readonly body: Buffer
  /** A digest of `body`: the `ETag`, and the `v` query of the URL the page links it by. */
  readonly version: string
}

export const staticAsset = (name: string, contentType: string, body: Buffer): StaticAsset => ({
  name,
  contentType,
  body,
  version: createHash("sha256").update(body).digest("base64url").slice(0, 16),
})
