import { visible } from "@petstore/core"
import { Console, Effect } from "effect"

/**
 * `program` with what it writes to stderr through Effect's console made `visible`, line by line:
 * @effect/cli echoes a bad command line's arguments there (`Received unknown argument: '…'`),
 * and a person's arguments may hold anything.
 */
export const echoingVisibly = <A, E, R>(program: Effect.Effect<A, E, R>) =>
  Console.consoleWith((console) =>
    Console.withConsole(program, {
      ...console,
      error: (...args) =>
        console.error(
          ...args.map((arg: unknown) =>
            typeof arg === "string" ? arg.split("\n").map(visible).join("\n") : arg,
          ),
        ),
    }),
  )

/** Fails the process (exit code 1) once it ends, without ending it. */
export const exitFailed = Effect.sync(() => {
  process.exitCode = 1
})
