import type { PetRepository } from "@petstore/core"
import type { RequestTracing } from "@petstore/http"
import type { Layer } from "effect"

/** Traces exported by the OpenTelemetry SDK: what the server wires into its runtime and app. */
export interface Tracing {
  /**
   * The runtime's tracer, over the SDK's provider: Effect's spans (the use case's, the
   * repository's, `sql.execute`) become spans of the request's trace. Provide it under the
   * storage, so that the fibers the storage forks (group commit) trace too.
   */
  readonly tracerLayer: Layer.Layer<never>
  /** A span around each repository method: provide it over the storage's `PetRepository`. */
  readonly repositorySpans: Layer.Layer<PetRepository, never, PetRepository>
  /** The SERVER span of each request, for `createApp({ tracing })`. */
  readonly requestTracing: RequestTracing
  /** Exports the spans still waiting, then stops the SDK: for shutdown, under a deadline. */
  readonly shutdown: () => Promise<void>
}
