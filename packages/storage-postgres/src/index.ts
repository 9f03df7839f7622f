export * as PostgresPetRepository from "./PostgresPetRepository.js"
export { readPostgresUrl, type PostgresUrlParts } from "./postgres-url.js"
