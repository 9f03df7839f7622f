import { MemoryPetRepository } from "../src/index.js"
import { repositoryContract } from "../src/testing/index.js"

repositoryContract("in-memory", MemoryPetRepository.layer, {
  withIdempotencyTtl: (ttl) => MemoryPetRepository.layerWith({ idempotencyTtl: ttl }),
})
