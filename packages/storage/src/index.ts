export * as MemoryPetRepository from "./MemoryPetRepository.js"
export {
  describeStorageChoice,
  parseStorageChoice,
  storageLayer,
  type StorageChoice,
} from "./storage-selection.js"
