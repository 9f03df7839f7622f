/** One sample of a Prometheus text exposition. */
export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

// As Prometheus reads them (Go's ParseFloat): case-insensitive; prom-client writes `Nan`.
const specialValues: Readonly<Record<string, number>> = {
  "+inf": Infinity,
  inf: Infinity,
  "-inf": -Infinity,
  nan: Number.NaN,
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y

const parseLabels = (text: string, line: string): Record<string, string> => {
  const labels: Record<string, string> = {}
  labelPair.lastIndex = 0
  while (labelPair.lastIndex < text.length) {
    const match = labelPair.exec(text)
    if (match === null) throw new Error(`labels that do not parse: ${line}`)
    labels[match[1] ?? ""] = (match[2] ?? "").replace(/\\(.)/g, (_, char: string) =>
      char === "n" ? "\n" : char,
    )
  }
  return labels
}

/**
 * Parses the text format (version 0.0.4) strictly: every line is a comment, blank, or a sample
 * whose labels and value parse; anything else throws.
 */
export const parseExposition = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").flatMap((line): Array<Sample> => {
    if (line === "" || line.startsWith("#")) return []
    const match = sampleLine.exec(line)
    const text = match?.[3] ?? ""
    const value = specialValues[text.toLowerCase()] ?? Number(text)
    if (match === null || (Number.isNaN(value) && text.toLowerCase() !== "nan")) {
      throw new Error(`a line that does not parse: ${line}`)
    }
    return [{ name: match[1] ?? "", labels: parseLabels(match[2] ?? "", line), value }]
  })

export const samplesNamed = (samples: ReadonlyArray<Sample>, name: string): ReadonlyArray<Sample> =>
  samples.filter((sample) => sample.name === name)

/** The value of the one sample with this name and these labels (others may be present). */
export const sampleValue = (
  samples: ReadonlyArray<Sample>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number | undefined =>
  samples.find(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([label, value]) => sample.labels[label] === value),
  )?.value

export const scrape = async (origin: string): Promise<ReadonlyArray<Sample>> => {
  const response = await fetch(`${origin}/metrics`)
  if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`)
  return parseExposition(await response.text())
}
