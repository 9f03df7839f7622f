export { repositoryContract, type RepositoryContractOptions } from "./repository-contract.js"
export { failingRepository } from "./failing-repository.js"
