/**
 * Remembers up to `capacity` values by key, computing each once; when full it starts afresh, and
 * keys longer than `maxKeyLength` are not kept, so memory stays bounded whatever clients send.
 */
export const boundedMemo = <A>(capacity: number, maxKeyLength = 256) => {
  const values = new Map<string, A>()
  return {
    /** How many values are kept now. */
    size: () => values.size,
    get: (key: string, compute: () => A): A => {
      const known = values.get(key)
      if (known !== undefined) return known
      const value = compute()
      if (key.length > maxKeyLength) return value
      if (values.size >= capacity) values.clear()
      values.set(key, value)
      return value
    },
  }
}
