import { Config, Option } from "effect"
import { defaultOverload } from "@petstore/http/node"
import { fromEnv, orOff, setting } from "./setting.js"
import { milliseconds } from "./values.js"

/** Admission control: what an overloaded server refuses (see Overload). */
export const overloadSettings = {
  overloadTarget: setting({
    variable: "PETSTORE_OVERLOAD_TARGET",
    fallback: `${defaultOverload.targetMs}ms`,
    description:
      "Admission control: once requests have waited longer than this (plus a CPU quota's freeze, under a quota of less than a core) for `PETSTORE_OVERLOAD_INTERVAL` while the server computed (a standing queue of its own work, not a burst, nor a disk that stalls it), each that has is refused at once with 503 `overloaded` and `Retry-After`, before the key check, its body and storage; `/healthz`, `/readyz` and `/metrics` never are. `off`: every request is served however late (see Overload).",
    read: fromEnv(orOff(milliseconds)),
  }),
  overloadInterval: setting({
    variable: "PETSTORE_OVERLOAD_INTERVAL",
    fallback: `${defaultOverload.intervalMs}ms`,
    description:
      "How long waits may stay above `PETSTORE_OVERLOAD_TARGET` before anything is refused (a burst that drains within it is served whole); refusals stop once no request has waited longer than the target for this long, and at least a second. At least the target.",
    read: fromEnv(milliseconds),
  }),
}

const { overloadTarget, overloadInterval } = overloadSettings

/** Admission control's durations, or none when it is off; an interval shorter than the target is refused. */
export const overloadConfig = Config.all({
  target: overloadTarget.config,
  interval: overloadInterval.config,
}).pipe(
  Config.validate({
    message: `${overloadInterval.variable} must be at least ${overloadTarget.variable}`,
    validation: ({ target, interval }) => Option.isNone(target) || target.value <= interval,
  }),
  Config.map(({ target, interval }) =>
    Option.map(target, (targetMs) => ({ targetMs, intervalMs: interval })),
  ),
)
