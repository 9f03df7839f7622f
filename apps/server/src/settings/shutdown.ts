import { Either } from "effect"
import { fromEnv, setting, type Reading } from "./setting.js"
import { milliseconds } from "./values.js"

/** A duration, not 0: Node reads a keep-alive timeout of 0 as none (idle connections kept forever). */
const positiveMilliseconds: Reading<number> = {
  ...milliseconds,
  rule: "a positive duration of at most an hour in seconds or milliseconds, such as 5s or 500ms",
  read: (text) =>
    Either.flatMap(milliseconds.read(text), (ms) =>
      ms > 0 ? Either.right(ms) : Either.left(undefined),
    ),
}

/** How long idle connections are kept, and the steps of shutdown, each bounded (see Rolling restarts). */
export const shutdownSettings = {
  keepAliveTimeout: setting({
    variable: "PETSTORE_KEEP_ALIVE_TIMEOUT",
    fallback: "65s",
    description:
      "How long an idle kept-alive connection stays open: longer than the idle timeout of the load balancer in front (nginx's `keepalive_timeout` for upstreams and an AWS load balancer's are 60 s), so that the balancer always closes an idle connection first; one the server closes may be the one the balancer is sending a request on at that moment. Serving clients directly, with no balancer, `5s` frees their connections sooner.",
    read: fromEnv(positiveMilliseconds),
  }),
  shutdownDrain: setting({
    variable: "PETSTORE_SHUTDOWN_DRAIN",
    fallback: "5s",
    description:
      "On `SIGTERM`, how long the server goes on accepting connections and answering as usual while `GET /readyz` answers 503, for load balancers and Kubernetes to stop sending it requests; then it stops accepting at the first quiet moment, at most 2 s later (`0s`: at once). `SIGINT` (Ctrl-C) skips it.",
    read: fromEnv(milliseconds),
  }),
  shutdownIdle: setting({
    variable: "PETSTORE_SHUTDOWN_IDLE",
    fallback: "5s",
    description:
      "Then, no longer accepting connections, how long idle kept-alive connections are left to their clients before the server closes them (a request sent on one meanwhile is answered, with `Connection: close`); longer than the balancer's idle timeout, it has closed them first. At most `PETSTORE_SHUTDOWN_REQUESTS`; `SIGINT` skips it.",
    read: fromEnv(milliseconds),
  }),
  shutdownRequests: setting({
    variable: "PETSTORE_SHUTDOWN_REQUESTS",
    fallback: "10s",
    description:
      "From the moment the server stops accepting connections, how long the requests in flight may take before their connections are cut.",
    read: fromEnv(milliseconds),
  }),
  shutdownStorage: setting({
    variable: "PETSTORE_SHUTDOWN_STORAGE",
    fallback: "5s",
    description:
      "Then how long closing the storage may take (the last spans are exported in what is left of it); past it, or if it fails, the process exits 1.",
    read: fromEnv(milliseconds),
  }),
}
