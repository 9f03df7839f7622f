export { repositoryContract } from "./repository-contract.js"
