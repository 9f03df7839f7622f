/** The largest request body accepted, in bytes. */
export const maxBodyBytes = 1024 * 1024

/** The deepest nesting of arrays and objects accepted in a JSON body. */
export const maxJsonDepth = 32
