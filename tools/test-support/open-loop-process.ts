// Runs `openLoop` with the options given as JSON in its one argument; prints the result as JSON.
import { decodeOptions, openLoop } from "./open-loop.js"

process.stdout.write(JSON.stringify(await openLoop(decodeOptions(process.argv[2] ?? ""))))
