/** Where the server reports what happened: start-up, shutdown, storage trouble and unexpected failures. */
export interface Logger {
  readonly info: (message: string, fields?: Record<string, unknown>) => void
  readonly warn: (message: string, fields?: Record<string, unknown>) => void
  readonly error: (message: string, fields?: Record<string, unknown>) => void
}

const line = (level: string, message: string, fields: Record<string, unknown> | undefined) =>
  `${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`

/** One JSON object per line: info to stdout, warnings and errors to stderr. */
export const jsonLinesLogger: Logger = {
  info: (message, fields) => process.stdout.write(line("info", message, fields)),
  warn: (message, fields) => process.stderr.write(line("warn", message, fields)),
  error: (message, fields) => process.stderr.write(line("error", message, fields)),
}

export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
}

/** An error's message and those of the errors behind it, outermost first; never a stack. */
export const describeCause = (cause: unknown, seen: Set<unknown> = new Set()): string => {
  if (cause === undefined || cause === null || seen.has(cause)) return ""
  seen.add(cause)
  if (cause instanceof Error) {
    const inner = describeCause(cause.cause, seen)
    return inner === "" ? cause.message : `${cause.message}: ${inner}`
  }
  return String(cause)
}
