export * as SqlitePetRepository from "./SqlitePetRepository.js"
