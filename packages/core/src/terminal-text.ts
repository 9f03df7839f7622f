/** Bidirectional formatting characters: they change the order in which a terminal shows text. */
export const bidiFormatting = "\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069"

/** What a terminal obeys rather than shows: control characters (C0, DEL, C1) and bidi formatting. */
const terminalControls = new RegExp(`[\\p{Cc}${bidiFormatting}]`, "gu")

/** Those of them a JSON text may hold raw: JSON escapes C0 itself, but not DEL, C1 or bidi. */
const rawInJson = new RegExp(`[\\u007F-\\u009F${bidiFormatting}]`, "gu")

const unicodeEscape = (character: string) =>
  `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`

/**
 * `text` with each character a terminal would obey written as the escape JSON and JavaScript
 * read (`\u001b`, `\u0085`, `\u202e`): how stored or typed text is printed, so that none of it
 * can recolour, move or reorder what a terminal shows.
 */
export const visible = (text: string): string => text.replace(terminalControls, unicodeEscape)

/**
 * A JSON text with the characters JSON leaves raw written as escapes: they can only stand inside
 * a string, so it parses to the same value, and a terminal showing it has nothing to obey.
 */
export const visibleJson = (json: string): string => json.replace(rawInJson, unicodeEscape)
