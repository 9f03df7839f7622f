import { Option } from "effect"
import type { ApiServer } from "../vocabulary/openapi-types.js"

export interface ServerUrls {
  /** Where the versioned API is mounted; empty for the root. */
  readonly basePath: string
  /** The production base URL, ending in the base path. */
  readonly publicUrl: Option.Option<string>
  /** The staging base URL, ending in the base path. */
  readonly stagingUrl: Option.Option<string>
}

/** Without configured URLs: the server that serves the document, wherever it is reached. */
export const sameOriginServers = (basePath: string): ReadonlyArray<ApiServer> => [
  { url: basePath === "" ? "/" : basePath, description: "This server" },
]

/**
 * The `servers` of the document: production, or the server that serves the document when no
 * production URL is configured, then staging when one is. The first is what tools try by default.
 */
export const apiServers = ({
  basePath,
  publicUrl,
  stagingUrl,
}: ServerUrls): ReadonlyArray<ApiServer> => [
  ...Option.match(publicUrl, {
    onNone: () => sameOriginServers(basePath),
    onSome: (url) => [{ url, description: "Production" }],
  }),
  ...Option.toArray(stagingUrl).map((url) => ({ url, description: "Staging" })),
]
