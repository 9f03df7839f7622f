import { Clock, Effect, Layer, Option, Ref } from "effect"
import { ApiKeyNotFound, ApiKeyStore, type ApiKeyRecord } from "@petstore/core"

interface MemoryKey {
  readonly record: ApiKeyRecord
  readonly hash: string
}

/**
 * An `ApiKeyStore` held in this process: what `memory` storage has. Nothing else can reach it,
 * so a server on it starts with no stored key and has only those it creates itself.
 */
export const make: Effect.Effect<ApiKeyStore["Type"]> = Effect.gen(function* () {
  const keys = yield* Ref.make(new Map<string, MemoryKey>())
  const insert = (key: { id: string; label: string; hash: string }, onlyFirst: boolean) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Ref.modify(keys, (stored): [Option.Option<ApiKeyRecord>, Map<string, MemoryKey>] => {
        if (onlyFirst && stored.size > 0) return [Option.none(), stored]
        const record = { id: key.id, label: key.label, createdAt: now, lastUsedAt: Option.none() }
        return [Option.some(record), new Map(stored).set(key.id, { record, hash: key.hash })]
      }),
    )
  return ApiKeyStore.of({
    create: (key) =>
      Effect.flatMap(insert(key, false), (created) =>
        Option.match(created, {
          onNone: () => Effect.dieMessage("a key was not stored"),
          onSome: Effect.succeed,
        }),
      ),
    createFirst: (key) => insert(key, true),
    list: Effect.map(Ref.get(keys), (stored) => [...stored.values()].map(({ record }) => record)),
    revoke: (id) =>
      Effect.flatMap(
        Ref.modify(keys, (stored): [boolean, Map<string, MemoryKey>] => {
          if (!stored.has(id)) return [false, stored]
          const rest = new Map(stored)
          rest.delete(id)
          return [true, rest]
        }),
        (revoked) => (revoked ? Effect.void : Effect.fail(new ApiKeyNotFound({ id }))),
      ),
    findIdByHash: (hash) =>
      Effect.map(Ref.get(keys), (stored) =>
        Option.fromNullable([...stored.values()].find((key) => key.hash === hash)?.record.id),
      ),
    recordUses: (uses) =>
      Ref.update(keys, (stored) => {
        const updated = new Map(stored)
        for (const use of uses) {
          const key = updated.get(use.id)
          if (key === undefined) continue
          const last = Option.getOrElse(key.record.lastUsedAt, () => use.at)
          const lastUsedAt = Option.some(Math.max(last, use.at))
          updated.set(use.id, { ...key, record: { ...key.record, lastUsedAt } })
        }
        return updated
      }),
  })
})

export const layer: Layer.Layer<ApiKeyStore> = Layer.effect(ApiKeyStore, make)
