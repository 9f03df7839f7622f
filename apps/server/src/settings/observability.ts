import { Config, Option } from "effect"
import { logLevels } from "@petstore/http"
import { fromEnv, optionalSetting, setting } from "./setting.js"
import { oneOf, onOrOff, port } from "./values.js"

/** What the process logs, and whether and where it serves its metrics. */
export const observabilitySettings = {
  logLevel: setting({
    variable: "PETSTORE_LOG_LEVEL",
    fallback: "info",
    description:
      "The least severe log lines written (JSON, one per line): `trace`, `debug`, `info` (one line per request), `warn`, `error`, `fatal` or `silent`. The start-up and shutdown lines are written at any level but `silent`.",
    read: fromEnv(oneOf(logLevels)),
  }),
  metrics: setting({
    variable: "PETSTORE_METRICS",
    fallback: "on",
    description:
      "`on`: `GET /metrics` serves Prometheus metrics, without a key; `off`: it is not served (then an unknown path: 401 without a key, 404 with one).",
    read: fromEnv(onOrOff),
  }),
  metricsPort: optionalSetting({
    variable: "PETSTORE_METRICS_PORT",
    whenUnset: "`GET /metrics` is served on `PORT`, beside the API",
    description:
      "A port of its own for `GET /metrics`, on `HOST`; the API's port then no longer serves it, and this one serves nothing else (0 picks a free one; the start-up log says which). Refused with `PETSTORE_METRICS=off`.",
    read: fromEnv(port),
  }),
  probePort: optionalSetting({
    variable: "PETSTORE_PROBE_PORT",
    whenUnset: "`/healthz` and `/readyz` are served on `PORT` only",
    description:
      "A port of its own for `GET /healthz` and `GET /readyz` too, on `HOST`, answered by a thread of its own: within milliseconds however overloaded the API's port is (see Overload), for Kubernetes' probes. The API's port still serves both (0 picks a free one; the start-up log says which).",
    read: fromEnv(port),
  }),
}

const { metrics, metricsPort } = observabilitySettings

/** A metrics port with metrics off is a contradiction: refused rather than ignored. */
export const metricsConfig = Config.all({
  metrics: metrics.config,
  metricsPort: metricsPort.config,
}).pipe(
  Config.validate({
    message: `${metricsPort.variable} is set but ${metrics.variable} is off: unset one of them`,
    validation: (chosen) => chosen.metrics || Option.isNone(chosen.metricsPort),
  }),
)
