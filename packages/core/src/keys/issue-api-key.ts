import type { StorageUnavailable } from "../errors.js"
import { ApiKeyStore, type ApiKeyRecord } from "./ApiKeyStore.js"
import { Effect, Option, Redacted, Schema } from "effect"
import { generateApiKey, generateKeyId, hashApiKey } from "./api-key-format.js"
import { bidiFormatting } from "../terminal-text.js"

/**
 * What a key may be labelled with: one line of 1 to 100 characters, any Unicode text but a
 * control character (category Cc: C0 with tab and line breaks, DEL, C1) or a bidirectional
 * formatting character, either of which could make a terminal show what is not there.
 */
export const ApiKeyLabel = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a label may not be empty" }),
  Schema.maxLength(100, { message: () => "a label may have at most 100 characters" }),
  Schema.pattern(/^[^\p{Cc}]*$/u, {
    message: () =>
      "a label may not hold control characters (such as a tab, a line break or ESC): it is one line of text",
  }),
  Schema.pattern(new RegExp(`^[^${bidiFormatting}]*$`, "u"), {
    message: () =>
      "a label may not hold bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069): they change the order in which a terminal shows text",
  }),
)

/** A key just stored: the key itself, to be shown once, and what the store keeps of it. */
export interface IssuedApiKey {
  readonly key: Redacted.Redacted<string>
  readonly record: ApiKeyRecord
}

const prepare = (label: string) => {
  const key = generateApiKey()
  return { key: Redacted.make(key), stored: { id: generateKeyId(), label, hash: hashApiKey(key) } }
}

/** Makes a key and stores its hash: what `npm run keys -- create` does. */
export const issueApiKey = (
  label: string,
): Effect.Effect<IssuedApiKey, StorageUnavailable, ApiKeyStore> =>
  Effect.flatMap(ApiKeyStore, (store) => {
    const { key, stored } = prepare(label)
    return Effect.map(store.create(stored), (record) => ({ key, record }))
  })

/**
 * Makes and stores a key only when the store holds none: what a server does on its first
 * start. `None` when a key was stored already (by another process starting at once, say).
 */
export const issueFirstApiKey = (
  label: string,
): Effect.Effect<Option.Option<IssuedApiKey>, StorageUnavailable, ApiKeyStore> =>
  Effect.flatMap(ApiKeyStore, (store) => {
    const { key, stored } = prepare(label)
    return Effect.map(
      store.createFirst(stored),
      Option.map((record) => ({ key, record })),
    )
  })
