export { sqliteIntegrityCheck } from "./sqlite-integrity.js"
