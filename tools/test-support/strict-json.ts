import { Schema } from "effect"

const strict = { onExcessProperty: "error" } as const

/** Reads a response's JSON body as `schema`, refusing any property the schema does not define. */
export const strictJson =
  <A, I>(schema: Schema.Schema<A, I>) =>
  async (response: Response): Promise<A> =>
    Schema.decodeUnknownPromise(schema, strict)(await response.json())
