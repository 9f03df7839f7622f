import {
  Array as Arr,
  Config,
  ConfigError,
  ConfigProvider,
  Effect,
  Either,
  Option,
  Schema,
  type ParseResult,
} from "effect"

/** What applies when a variable is unset or empty: a value, or what happens instead. */
export type SettingDefault = { readonly value: string } | { readonly none: string }

/** An environment variable as the README's configuration table documents it. */
export interface Documented {
  readonly variable: string
  readonly default: SettingDefault
  /** One line, Markdown. */
  readonly description: string
}

/** A variable the server reads on its own: documented, and how it is read. */
export interface Setting<A> extends Documented {
  readonly config: Config.Config<A>
}

/**
 * How a variable's text is read when no `Config` constructor of Effect's does it as documented:
 * the value, or why the text is refused (`undefined`: the refusal quotes the text instead).
 */
export interface Reading<A> {
  /** What the text must be: a refusal says `<VARIABLE> must be <rule>`. */
  readonly rule: string
  readonly read: (text: string) => Either.Either<A, string | undefined>
  /** How a refusal quotes the text: whole, unless it may hold a secret (see `shownValue`). */
  readonly quote: (text: string) => string
}

export const quoted = (text: string): string => `got ${JSON.stringify(text)}`

/** The message of the first check that gave one (a `Schema.filter` returning a string). */
const detailOf = (issue: ParseResult.ParseIssue): string | undefined => {
  switch (issue._tag) {
    case "Type":
      return issue.message
    case "Composite":
      return Arr.findFirst(Arr.ensure(issue.issues), (inner) =>
        Option.fromNullable(detailOf(inner)),
      ).pipe(Option.getOrUndefined)
    case "Refinement":
    case "Transformation":
    case "Pointer":
      return detailOf(issue.issue)
    default:
      return undefined
  }
}

/**
 * A reading by a schema: `Schema.Config`'s work, refused in one line (`readText`) rather than in
 * `Schema.Config`'s tree of issues, which quotes the text whatever it holds.
 */
export const fromSchema = <A>(
  schema: Schema.Schema<A, string>,
  rule: string,
  quote: (text: string) => string = quoted,
): Reading<A> => {
  const decode = Schema.decodeUnknownEither(schema)
  return {
    rule,
    quote,
    read: (text) => Either.mapLeft(decode(text), (error) => detailOf(error.issue)),
  }
}

/** The same reading, `off` aside (none). */
export const orOff = <A>(reading: Reading<A>): Reading<Option.Option<A>> => ({
  rule: `${reading.rule} or off`,
  quote: reading.quote,
  read: (text) =>
    text.trim() === "off"
      ? Either.right(Option.none())
      : Either.map(reading.read(text), Option.some),
})

/** One line that names the variable, says what it must be, and why this text is not. */
export const readText = <A>(
  variable: string,
  reading: Reading<A>,
  text: string,
): Either.Either<A, ConfigError.ConfigError> =>
  Either.mapLeft(reading.read(text), (detail) =>
    ConfigError.InvalidData(
      [variable],
      `${variable} must be ${reading.rule}; ${detail ?? reading.quote(text)}`,
    ),
  )

/** A reading as a `Config` constructor, such as `Config.string`: `fromEnv(port)("PORT")`. */
export const fromEnv =
  <A>(reading: Reading<A>) =>
  (variable: string): Config.Config<A> =>
    Config.string(variable).pipe(Config.mapOrFail((text) => readText(variable, reading, text)))

type Read<A> = (variable: string) => Config.Config<A>

interface Declaration<A> {
  readonly variable: string
  readonly description: string
  readonly read: Read<A>
}

/** The default's text read as if the variable held it; one that cannot be read is a bug. */
const valueOf = <A>(config: Config.Config<A>, variable: string, text: string): A =>
  Effect.runSync(ConfigProvider.fromMap(new Map([[variable, text]])).load(config))

/** A setting whose default is a value, documented as the text that reads as it. */
export const setting = <A>(spec: Declaration<A> & { readonly fallback: string }): Setting<A> => {
  const config = spec.read(spec.variable)
  return {
    variable: spec.variable,
    default: { value: spec.fallback },
    description: spec.description,
    config: Config.withDefault(config, valueOf(config, spec.variable, spec.fallback)),
  }
}

/** A setting that may be left unset; `whenUnset` says what happens then. */
export const optionalSetting = <A>(
  spec: Declaration<A> & { readonly whenUnset: string },
): Setting<Option.Option<A>> => ({
  variable: spec.variable,
  default: { none: spec.whenUnset },
  description: spec.description,
  config: Config.option(spec.read(spec.variable)),
})

/** A variable's name, meaning and default, as a declaration gives them. */
export type Described = { readonly variable: string; readonly description: string } & (
  { readonly fallback: string } | { readonly whenUnset: string }
)

/** A variable as the README documents it, whoever reads it. */
export const documented = (spec: Described): Documented => ({
  variable: spec.variable,
  default: "fallback" in spec ? { value: spec.fallback } : { none: spec.whenUnset },
  description: spec.description,
})

/**
 * Every refusal among `checks`, given the first (all that `Either.all` keeps):
 * `Either.all(checks).pipe(Either.mapLeft(everyRefusal(checks)))`.
 */
export const everyRefusal =
  (checks: Readonly<Record<string, Either.Either<unknown, ConfigError.ConfigError>>>) =>
  (first: ConfigError.ConfigError): ConfigError.ConfigError =>
    Arr.getLefts(Object.values(checks)).slice(1).reduce(ConfigError.And, first)
