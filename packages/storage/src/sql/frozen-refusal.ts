/**
 * What the store's triggers answer a write with while the store is frozen (`petstore_freeze`
 * holds its row). Written into the triggers by the migration, so it must stay free of quotes
 * and of `%`, which PL/pgSQL's `RAISE` would read as a placeholder.
 */
export const frozenMessage =
  "petstore store is frozen: it takes no new pets and no key changes until npm run storage -- thaw"

const marker = "petstore store is frozen"

/**
 * Whether a driver failure is a frozen store's refusal (SQLite's `RAISE(ABORT, …)`, PostgreSQL's
 * SQLSTATE 55000 from the trigger), looking through `cause` chains as `isTransient` does.
 */
export const isFrozenRefusal = (error: unknown, seen: Set<unknown> = new Set()): boolean => {
  if (typeof error !== "object" || error === null || seen.has(error)) return false
  seen.add(error)
  if (error instanceof Error && error.message.includes(marker)) return true
  return "cause" in error && isFrozenRefusal(error.cause, seen)
}
