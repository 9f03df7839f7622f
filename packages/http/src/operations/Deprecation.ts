/** When an operation stopped being recommended, when it goes away, and what replaces it. */
export interface Deprecation {
  /** RFC 9745 `Deprecation`. */
  readonly since: Date
  /** RFC 8594 `Sunset`. */
  readonly sunset: Date
  /** The path, under the base path, of what replaces it (`Link: <…>; rel="successor-version"`). */
  readonly successor: string
}

/** The headers every response of a deprecated operation carries, whatever its status. */
export const deprecationHeaders = (deprecation: Deprecation, basePath: string) => ({
  Deprecation: `@${Math.floor(deprecation.since.getTime() / 1000)}`,
  Sunset: deprecation.sunset.toUTCString(),
  Link: `<${basePath}${deprecation.successor}>; rel="successor-version"`,
})
