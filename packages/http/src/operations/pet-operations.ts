import { createPetHandler, getPetHandler, listPetsHandler } from "./pet-handlers.js"
import { createPetOperation, getPetOperation, listPetsOperation } from "./pet-api.js"
import { serveOperation, type ServedOperation } from "./serve-operation.js"

/**
 * The Petstore's operations, each its declaration joined with its handler, in the order the
 * document lists them: the one list the app serves and the document describes.
 */
export const petOperations: ReadonlyArray<ServedOperation> = [
  serveOperation(listPetsOperation, listPetsHandler),
  serveOperation(createPetOperation, createPetHandler),
  serveOperation(getPetOperation, getPetHandler),
]

/** `petOperations`, as embedders before it was one list asked for it. */
export const servePetOperations = (): ReadonlyArray<ServedOperation> => petOperations
