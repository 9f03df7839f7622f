/** Where the server reports what happened: start-up, shutdown and unexpected failures. */
export interface Logger {
  readonly info: (message: string, fields?: Record<string, unknown>) => void
  readonly error: (message: string, fields?: Record<string, unknown>) => void
}

const line = (level: string, message: string, fields: Record<string, unknown> | undefined) =>
  `${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`

/** One JSON object per line: info to stdout, errors to stderr. */
export const jsonLinesLogger: Logger = {
  info: (message, fields) => process.stdout.write(line("info", message, fields)),
  error: (message, fields) => process.stderr.write(line("error", message, fields)),
}

export const silentLogger: Logger = {
  info: () => {},
  error: () => {},
}
