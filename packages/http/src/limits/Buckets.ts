import type { Decision, Rate } from "./rate.js"

/** Token buckets by key for one limit; each starts full. */
export interface Buckets {
  /** Spends one of the key's tokens if it has one. */
  readonly take: (key: string) => Decision | Promise<Decision>
  /** Gives back a token taken for a request that turned out not to count. */
  readonly giveBack: (key: string) => void | Promise<void>
}

/** Where the buckets of every limit are kept: this process's memory, or a store shared by all. */
export interface BucketStore {
  /**
   * The buckets of one limit. `name` keeps limits apart in a shared store; `maxKeys` bounds how
   * many buckets a process keeps in memory.
   */
  readonly buckets: (name: string, rate: Rate, maxKeys: number) => Buckets
}
