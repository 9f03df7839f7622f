/** The largest request body accepted, in bytes. */
export const maxBodyBytes = 1024 * 1024
