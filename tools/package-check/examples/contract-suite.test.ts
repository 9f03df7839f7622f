import { repositoryContract } from "@petstore/storage/testing"
import * as MyPetRepository from "./MyPetRepository.js"

// Registers node:test cases: run them with `node --test`. Each case builds the layer afresh and
// releases it after; the second layer, keeping idempotency keys one second, proves their expiry.
repositoryContract("MyPetRepository", MyPetRepository.layer, {
  withIdempotencyTtl: (ttl) => MyPetRepository.layerWith({ idempotencyTtl: ttl }),
})
