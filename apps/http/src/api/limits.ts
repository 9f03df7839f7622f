/** The largest request body accepted, in bytes. */
export const maxBodyBytes = 1024 * 1024

/**
 * The longest `cursor` accepted. The service issues cursors of about 30 characters; a bound far
 * above that keeps a hostile one from reaching Node's header-size limit as an undocumented 431.
 */
export const maxCursorLength = 200
