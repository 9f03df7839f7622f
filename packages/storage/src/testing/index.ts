export { repositoryContract, type RepositoryContractOptions } from "./repository-contract.js"
export { failingRepository } from "./failing-repository.js"
export {
  withTemporaryPostgresDatabase,
  type TemporaryPostgresDatabase,
} from "./postgres-database.js"
export { sqliteIntegrityCheck } from "./sqlite-integrity.js"
