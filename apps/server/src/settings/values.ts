import { Duration, Schema } from "effect"
import type { Rate } from "@petstore/http"
import { fromSchema, type Reading } from "./setting.js"

// The kinds of value several settings share, read by schemas. Effect's `Config` constructors do
// not read them as documented (effect 3.22): `Config.integer` takes whatever `Number` takes
// (`1e3`, `0x10`, `1.5e0`), `Config.port` refuses 0 (which picks a free port), `Config.literal`
// and `Config.boolean` are case-sensitive (and `boolean` takes `yes`, `1`…), `Config.duration`
// reads Effect's spelling (`24 hours`), not `24h` or `90min`. And their refusals ("Expected an
// integer value but received …") leave the variable to the error's path and quote any text,
// a password included.

/** Digits alone (no sign, point, exponent or `0x`), surrounding spaces aside; a safe integer. */
const WholeNumber = Schema.compose(
  Schema.Trim,
  Schema.String.pipe(Schema.pattern(/^[0-9]+$/)),
).pipe(Schema.compose(Schema.NumberFromString), Schema.int())

const PositiveNumber = WholeNumber.pipe(Schema.positive())

export const port: Reading<number> = fromSchema(
  WholeNumber.pipe(Schema.between(0, 65535)),
  "an integer from 0 to 65535",
)

export const positiveInteger: Reading<number> = fromSchema(PositiveNumber, "a positive integer")

/** One of the words, whatever their case and the spaces around them. */
const OneOf = <const Words extends readonly [string, ...Array<string>]>(...words: Words) =>
  Schema.compose(Schema.Trim, Schema.Lowercase).pipe(Schema.compose(Schema.Literal(...words)))

export const oneOf = <const Words extends readonly [string, ...Array<string>]>(
  words: Words,
  rule = `one of ${words.join(", ")}`,
): Reading<Words[number]> => fromSchema(OneOf(...words), rule)

export const onOrOff: Reading<boolean> = fromSchema(
  OneOf("on", "off").pipe(
    Schema.transform(Schema.Boolean, {
      strict: true,
      decode: (word) => word === "on",
      encode: (on) => (on ? "on" : "off"),
    }),
  ),
  "on or off",
)

/** Comma-separated entries, each trimmed; empty ones are dropped. */
export const entriesOf = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "")

export const CommaSeparated = Schema.transform(Schema.String, Schema.Array(Schema.String), {
  strict: true,
  decode: entriesOf,
  encode: (entries) => entries.join(","),
})

/** A URL, kept as written, that `accepts`. */
export const UrlText = (accepts: (url: URL) => boolean) =>
  Schema.String.pipe(Schema.filter((text) => URL.canParse(text) && accepts(new URL(text))))

const windowSeconds = { s: 1, min: 60, h: 3600 } as const

/** `<n>/<s|min|h>`: a token bucket of n (at most ten digits) refilled evenly over the window. */
const RateText = Schema.TemplateLiteralParser(
  PositiveNumber.pipe(Schema.lessThanOrEqualTo(9_999_999_999)),
  "/",
  Schema.compose(Schema.Trim, Schema.Literal("s", "min", "h")),
).pipe(
  Schema.transform(Schema.Struct({ capacity: Schema.Number, windowSeconds: Schema.Number }), {
    strict: true,
    decode: ([capacity, , window]) => ({ capacity, windowSeconds: windowSeconds[window] }),
    encode: ({ capacity, windowSeconds: seconds }) =>
      [capacity, "/", seconds === 1 ? "s" : seconds === 60 ? "min" : "h"] as const,
  }),
)

export const rate: Reading<Rate> = fromSchema(
  Schema.String.pipe(Schema.compose(RateText)),
  "<count>/<s|min|h> (such as 1000/s or 20/min)",
)

/** The units a duration is written in: `24h`, `90min`, `3600 seconds`, `1 d`. */
const DurationUnit = Schema.Literal(
  "s",
  "second",
  "seconds",
  "m",
  "min",
  "minute",
  "minutes",
  "h",
  "hour",
  "hours",
  "d",
  "day",
  "days",
)

const inUnit = (unit: typeof DurationUnit.Type): ((amount: number) => Duration.Duration) => {
  switch (unit.charAt(0)) {
    case "s":
      return Duration.seconds
    case "m":
      return Duration.minutes
    case "h":
      return Duration.hours
    default:
      return Duration.days
  }
}

/** A positive whole number of seconds, minutes, hours or days. */
export const positiveDuration: Reading<Duration.Duration> = fromSchema(
  Schema.Trim.pipe(
    Schema.compose(Schema.TemplateLiteralParser(PositiveNumber, DurationUnit)),
    Schema.transform(Schema.DurationFromSelf, {
      strict: true,
      decode: ([amount, unit]) => inUnit(unit)(amount),
      encode: (duration) => [Duration.toSeconds(duration), "s"] as const,
    }),
  ),
  "a positive duration such as 24h, 90min or 3600s",
)

const millisecondsIn = { ms: 1, s: 1_000 } as const

/** A whole number of seconds or milliseconds up to an hour, 0 included (`5s`, `500ms`, `0s`), as milliseconds. */
export const milliseconds: Reading<number> = fromSchema(
  Schema.Trim.pipe(
    Schema.compose(Schema.TemplateLiteralParser(WholeNumber, Schema.Literal("ms", "s"))),
    Schema.transform(Schema.Number.pipe(Schema.lessThanOrEqualTo(3_600_000)), {
      strict: true,
      decode: ([amount, unit]) => amount * millisecondsIn[unit],
      encode: (ms) => [ms, "ms"] as const,
    }),
  ),
  "a duration of at most an hour in seconds or milliseconds, such as 5s or 500ms (0s for none)",
)
