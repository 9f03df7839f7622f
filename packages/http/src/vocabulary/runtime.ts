import type { PetRepository, StorageUnavailable } from "@petstore/core"
import type { ManagedRuntime } from "effect"

/** Runs the use cases; building its storage layer may fail only as `StorageUnavailable`. */
export type PetRuntime = ManagedRuntime.ManagedRuntime<PetRepository, StorageUnavailable>
