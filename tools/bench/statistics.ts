/** The nearest-rank percentile `p` (0–100) of some samples. */
export const percentile = (samples: ReadonlyArray<number>, p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length))
  return sorted[rank - 1] ?? Number.NaN
}

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >>> 1
  if (sorted.length === 0) return Number.NaN
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? Number.NaN) + (sorted[middle] ?? Number.NaN)) / 2
}

export interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
}

export const spread = (values: ReadonlyArray<number>): Spread => ({
  median: median(values),
  min: Math.min(...values),
  max: Math.max(...values),
})

export const format = (value: number, digits: number) =>
  value.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** "12,345 (12,001–12,890)", or just the median when there was one round. */
export const show = (values: Spread, digits: number, unit = "") =>
  values.min === values.max
    ? `${format(values.median, digits)}${unit}`
    : `${format(values.median, digits)}${unit} (${format(values.min, digits)}–${format(values.max, digits)})`

export const milliseconds = (value: number) => `${value.toFixed(2)} ms`

/** A Markdown table: one header row, then the rows. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  [header, header.map(() => "---"), ...rows].map((row) => `| ${row.join(" | ")} |`).join("\n")
