/** One log line, parsed. */
export type LogLine = Readonly<Record<string, unknown>>

/** Where a logger writes its lines (pino's `DestinationStream`). */
export interface LineSink {
  readonly write: (text: string) => void
}

export interface CapturedLogs<L> {
  readonly logger: L
  /** Every line as written: JSON text. */
  readonly raw: ReadonlyArray<string>
  /** Every line, parsed. */
  readonly lines: () => ReadonlyArray<LogLine>
  /** Every line as `<message> <the other fields as JSON>`, without time, level and pid. */
  readonly logged: ReadonlyArray<string>
}

const isLogLine = (value: unknown): value is LogLine =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const parseLogLine = (text: string): LogLine => {
  const parsed: unknown = JSON.parse(text)
  if (!isLogLine(parsed)) throw new Error(`not a log line: ${text}`)
  return parsed
}

/**
 * A real logger writing into memory: `makeLogger` builds it (the server's format, redaction
 * included) on the sink it is given.
 */
export const captureLogs = <L>(makeLogger: (sink: LineSink) => L): CapturedLogs<L> => {
  const raw: Array<string> = []
  const logged: Array<string> = []
  const logger = makeLogger({
    write: (text) => {
      raw.push(text)
      const { message, time: _time, level: _level, pid: _pid, ...fields } = parseLogLine(text)
      logged.push(`${String(message)} ${JSON.stringify(fields)}`)
    },
  })
  return { logger, raw, logged, lines: () => raw.map(parseLogLine) }
}
