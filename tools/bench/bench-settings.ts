/** A quick run (`BENCH_QUICK=1`): fewer and shorter rounds, for trying a change, not for figures. */
export const quick = process.env["BENCH_QUICK"] === "1"

/** The non-negative number the environment variable `name` holds, or `fallback` when it is unset. */
export const numberSetting = (name: string, fallback: number): number => {
  const text = process.env[name]
  const value = text === undefined || text === "" ? fallback : Number(text)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number; got ${text}`)
  return value
}
