import type { Registry } from "prom-client"

/** The Prometheus text of a registry, as `GET /metrics` serves it. */
export interface MetricsExposition {
  readonly contentType: string
  readonly render: () => Promise<string>
}

export interface ExpositionOptions {
  /**
   * How long one rendering is served again, in milliseconds; 0 (unless given) renders at every
   * scrape. Scrapes within it share one rendering, also while it is being made.
   */
  readonly reuseMs?: number
  /** The clock, in milliseconds; `performance.now` unless given. */
  readonly now?: () => number
}

/**
 * Rendering costs about a millisecond of CPU (every series, and Node's process metrics read
 * anew); Prometheus scrapes every 15 s or more, so reusing a rendering for a second loses
 * nothing it would see, while a client calling in a loop renders once a second at most.
 */
export const metricsExposition = (
  registry: Registry,
  options: ExpositionOptions = {},
): MetricsExposition => {
  const reuseMs = options.reuseMs ?? 0
  const now = options.now ?? (() => performance.now())
  let last: { readonly at: number; readonly text: Promise<string> } | undefined
  return {
    contentType: registry.contentType,
    render: () => {
      const at = now()
      if (last !== undefined && at - last.at < reuseMs) return last.text
      const text = registry.metrics()
      const rendering = { at, text }
      last = rendering
      // A rendering that failed is not served again.
      text.catch(() => {
        if (last === rendering) last = undefined
      })
      return text
    },
  }
}
