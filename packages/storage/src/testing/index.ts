export { repositoryContract } from "./repository-contract.js"
export {
  withTemporaryPostgresDatabase,
  type TemporaryPostgresDatabase,
} from "./postgres-database.js"
export { sqliteIntegrityCheck } from "./sqlite-integrity.js"
