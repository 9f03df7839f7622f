import type { ApiServer } from "./openapi-types.js"

export interface ServerUrls {
  /** The production base URL, ending in the base path. */
  readonly publicUrl: string
  /** The staging base URL, ending in the base path. */
  readonly stagingUrl: string
}

/** The `servers` of the document: production first, so that it is what tools try by default. */
export const apiServers = ({ publicUrl, stagingUrl }: ServerUrls): ReadonlyArray<ApiServer> => [
  { url: publicUrl, description: "Production" },
  { url: stagingUrl, description: "Staging" },
]

/** Without configured URLs: the server that serves the document, wherever it is reached. */
export const sameOriginServers = (basePath: string): ReadonlyArray<ApiServer> => [
  { url: basePath === "" ? "/" : basePath, description: "This server" },
]
