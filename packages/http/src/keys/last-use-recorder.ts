import type { ApiKeyUse } from "@petstore/core"

/**
 * Which stored keys were used since the last write, each at most once per `intervalMs`: the
 * store is written off the request's path, and never more often than that for one key.
 */
export const lastUseRecorder = (intervalMs: number) => {
  /** When each key's use was last noted, for the keys noted within the interval. */
  const noted = new Map<string, number>()
  let pending: Array<ApiKeyUse> = []
  return {
    /** That key `id` was used at `now` (epoch milliseconds); cheap, called on every request. */
    note: (id: string, now: number): void => {
      const last = noted.get(id)
      if (last !== undefined && now - last < intervalMs) return
      noted.set(id, now)
      pending.push({ id, at: now })
    },
    /** The uses to write now, which are no longer pending; forgets keys not used for an interval. */
    take: (now: number): ReadonlyArray<ApiKeyUse> => {
      const uses = pending
      pending = []
      for (const [id, at] of noted) if (now - at >= intervalMs) noted.delete(id)
      return uses
    },
    /** How many keys it remembers now. */
    trackedKeys: (): number => noted.size,
    /** Uses that could not be written: each key is noted afresh at its next use. */
    unwritten: (uses: ReadonlyArray<ApiKeyUse>): void => {
      for (const use of uses) if (noted.get(use.id) === use.at) noted.delete(use.id)
    },
  }
}
