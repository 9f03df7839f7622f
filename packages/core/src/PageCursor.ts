import { Either, Encoding, ParseResult, Schema } from "effect"
import { PetId } from "./Pet.js"

const prefix = "after:"
/**
 * The longest cursor accepted. Those issued are about 30 characters; the bound keeps a hostile
 * one far below Node's 16 KiB header limit, so it is refused as a bad query, not a 431.
 */
export const maxCursorLength = 200
const decimal = /^[1-9][0-9]{0,15}$/
const isPetId = Schema.is(PetId)

/** The cursor of the page that starts after `id`: what `PageCursor` encodes `id` as. */
export const cursorAfter = (id: number): string => Encoding.encodeBase64Url(`${prefix}${id}`)

/**
 * The opaque token that continues a listing: it names the last pet a page held, so the next
 * page starts after it. It is a position, not a credential: a token that does not decode to a
 * pet id (truncated, altered, or longer than `maxCursorLength`) is refused, while a hand-made
 * one that does decode simply starts a page there, which shows nothing a listing could not.
 */
export const PageCursor = Schema.transformOrFail(
  Schema.String.pipe(
    Schema.maxLength(maxCursorLength, {
      message: () => ({ message: `is longer than ${maxCursorLength} characters`, override: true }),
    }),
  ),
  PetId,
  {
    strict: true,
    decode: (token, _, ast) => {
      const text = Encoding.decodeBase64UrlString(token)
      const digits =
        Either.isRight(text) && text.right.startsWith(prefix) ? text.right.slice(prefix.length) : ""
      const id = decimal.test(digits) ? Number(digits) : Number.NaN
      return isPetId(id)
        ? ParseResult.succeed(id)
        : ParseResult.fail(new ParseResult.Type(ast, token, "is not a cursor"))
    },
    encode: (id) => ParseResult.succeed(cursorAfter(id)),
  },
).annotations({
  identifier: "PageCursor",
  description: 'Opaque token from a previous page\'s `Link: rel="next"` header.',
})
