import { Either, type Layer } from "effect"
import type { PetRepository } from "@petstore/core"
import * as MemoryPetRepository from "./MemoryPetRepository.js"

/** Which adapter backs the service, as parsed from `PETSTORE_STORAGE`. */
export type StorageChoice = { readonly kind: "memory" }

/** Reads a `PETSTORE_STORAGE` value: `memory`. */
export const parseStorageChoice = (text: string): Either.Either<StorageChoice, string> => {
  if (text === "memory") return Either.right({ kind: "memory" })
  return Either.left(`PETSTORE_STORAGE must be "memory"; got ${JSON.stringify(text)}`)
}

/** How the start-up log names the storage, without secrets. */
export const describeStorageChoice = (choice: StorageChoice): string => {
  switch (choice.kind) {
    case "memory":
      return "in-memory (pets are lost when the process exits)"
  }
}

export const storageLayer = (choice: StorageChoice): Layer.Layer<PetRepository> => {
  switch (choice.kind) {
    case "memory":
      return MemoryPetRepository.layer
  }
}
