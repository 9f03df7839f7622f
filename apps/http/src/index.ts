export { createApp, type AppOptions } from "./app.js"
export { readConfig, type ServerConfig } from "./config.js"
export { jsonLinesLogger, silentLogger, type Logger } from "./logger.js"
export { closeGracefully, createAppServer, listen } from "./server.js"
export { errorCatalogue, type ErrorCode } from "./api/error-catalogue.js"
export {
  defineOperation,
  type Operation,
  type OperationSpec,
  type PetRuntime,
} from "./api/operation.js"
export { petOperations } from "./api/pet-operations.js"
