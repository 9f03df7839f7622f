export {
  withTemporaryPostgresDatabase,
  type TemporaryPostgresDatabase,
} from "./postgres-database.js"
